//! mmkv-reader (under construction).
