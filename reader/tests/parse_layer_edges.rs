//! Edges of the parsing layer's public pieces (written for surviving mutants of `parse.rs` and
//! `read_at.rs`, docs/mutation-testing.md): a cursor moves past exactly the bytes it read, and
//! every `ReadAt` source (a slice, a reference to one, a reference to that) reads the same bytes,
//! lengths, CRCs and emptiness.

use mmkv_reader::locate::ReadAt;
use mmkv_reader::parse::Cursor;

#[test]
fn read_bytes_moves_past_exactly_what_it_read() {
    let mut c = Cursor::new(b"abcdefg");
    assert_eq!(c.read_bytes(2), Ok(&b"ab"[..]));
    assert_eq!(c.position(), 2);
    assert_eq!(c.read_bytes(3), Ok(&b"cde"[..]));
    assert_eq!(c.position(), 5);
    assert_eq!(c.rest(), b"fg");
    assert!(c.read_bytes(3).is_err());
    assert_eq!(c.position(), 5, "a failed read does not move the cursor");
    assert_eq!(c.read_bytes(0), Ok(&b""[..]));
    assert_eq!(c.read_bytes(2), Ok(&b"fg"[..]));
    assert!(c.is_empty());
}

fn same_reads<D: ReadAt + ?Sized>(d: &D, content: &[u8]) {
    assert_eq!(d.len().unwrap(), content.len() as u64);
    assert_eq!(d.is_empty().unwrap(), content.is_empty());
    if content.len() >= 3 {
        assert_eq!(d.read_at(1, 2).unwrap(), content[1..3].to_vec());
        let (bytes, crc) = d.read_at_crc(0, 3).unwrap();
        assert_eq!(bytes, content[..3].to_vec());
        assert_eq!(crc, crc32fast::hash(&content[..3]));
    }
    assert!(d.read_at(content.len() as u64, 1).is_err());
}

#[test]
fn every_source_form_reads_the_same() {
    for content in [&b""[..], &b"x"[..], &b"hello, store"[..]] {
        same_reads(content, content);
        same_reads(&content, content);
        same_reads(&&content, content);
    }
}
