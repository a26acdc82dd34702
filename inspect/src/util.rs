//! Small helpers: hex, printable key rendering, the clock.

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    s
}

/// Parses hex (upper or lower case, optional `0x` prefix, optional spaces or colons between bytes).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let t = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    let digits: Vec<u8> = t
        .bytes()
        .filter(|b| !matches!(b, b' ' | b':' | b'-' | b'_'))
        .collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("{text:?} is not hex: odd number of digits"));
    }
    let val = |c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("{text:?} is not hex: bad digit {:?}", c as char)),
        }
    };
    digits
        .chunks(2)
        .map(|p| Ok((val(p[0])? << 4) | val(p[1])?))
        .collect()
}

/// The key as UTF-8 (lossy), as the JSON `key` field shows it.
pub fn key_lossy(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

/// The key for a readable table: lossy UTF-8 with control characters escaped.
pub fn key_display(key: &[u8]) -> String {
    escape_text(&String::from_utf8_lossy(key))
}

/// Escapes control characters (and backslashes) of `s` so one value stays on one table line.
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Cuts `s` to at most `max` characters, marking the cut with an ellipsis.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Current time in epoch seconds as the official library and the reader see it
/// ([`mmkv_reader::SystemClock`]: `time(nullptr)`), so that `mmkv` calls a key expired exactly
/// when they do.
pub fn now_secs() -> u32 {
    mmkv_reader::Clock::now_secs(&mmkv_reader::SystemClock)
}

/// Epoch seconds as a UTC date and time, `YYYY-MM-DD HH:MM:SSZ` (proleptic Gregorian calendar).
pub fn utc(secs: u32) -> String {
    // Every u32 is a valid timestamp (1970..2106), so the fallback never shows.
    jiff::Timestamp::from_second(i64::from(secs))
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%SZ").to_string())
        .unwrap_or_else(|_| format!("{secs} (epoch seconds)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let bytes = [0u8, 1, 0x7f, 0x80, 0xff, 0x10];
        assert_eq!(hex(&bytes), "00017f80ff10");
        assert_eq!(parse_hex("00017F80ff10").unwrap(), bytes);
        assert_eq!(parse_hex("0x00 01:7f-80_ff10").unwrap(), bytes);
        assert!(parse_hex("abc").is_err());
        assert!(parse_hex("zz").is_err());
        assert_eq!(parse_hex("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00Z");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13:20Z");
        assert_eq!(utc(u32::MAX), "2106-02-07 06:28:15Z");
    }

    #[test]
    fn escaping_and_truncation() {
        assert_eq!(escape_text("a\nb\t\u{1}\\"), "a\\nb\\t\\u{1}\\\\");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(key_display(&[0x66, 0xff]), "f\u{fffd}");
    }
}
