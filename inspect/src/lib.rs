//! mmkv-inspect (under construction).
