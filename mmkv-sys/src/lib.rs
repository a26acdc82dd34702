//! mmkv-sys (under construction).
