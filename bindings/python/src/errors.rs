//! The Python exceptions, and which reader / inspector error becomes which.
//!
//! ```text
//! MMKVReaderError(Exception)        every error of this package
//! ├── StoreNotFoundError            data file or meta file (PATH.crc) missing
//! ├── StoreIOError                  I/O failure, a directory or special file
//! ├── CorruptStoreError             short files, size beyond the file, CRC mismatch, records that do not parse
//! ├── EncryptedStoreError           no key given and the region does not parse as plaintext
//! └── WrongKeyError                 a key was given and the decrypted region does not parse
//! ```
//! The message is the typed error's own message (`str(e)`).

use mmkv_inspect::Error as InspectError;
use mmkv_reader::Error as ReaderError;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::{create_exception, PyErr};

create_exception!(
    mmkv_reader,
    MMKVReaderError,
    PyException,
    "Base class of every error raised by mmkv_reader."
);
create_exception!(
    mmkv_reader,
    StoreNotFoundError,
    MMKVReaderError,
    "The data file or its meta file (PATH.crc) does not exist."
);
create_exception!(
    mmkv_reader,
    StoreIOError,
    MMKVReaderError,
    "An I/O failure, or a path that is a directory or special file."
);
create_exception!(
    mmkv_reader,
    CorruptStoreError,
    MMKVReaderError,
    "The store is damaged: short files, a size beyond the file, a CRC mismatch, records that do not parse."
);
create_exception!(
    mmkv_reader,
    EncryptedStoreError,
    MMKVReaderError,
    "No crypt key was given and the data region does not parse as plaintext records (encrypted, or damaged)."
);
create_exception!(
    mmkv_reader,
    WrongKeyError,
    MMKVReaderError,
    "A crypt key was given and the decrypted region does not parse (wrong key, wrong aes256 flag, or damaged data)."
);

/// A reader error (from `mmkv_reader::Store` or `raw::read_raw`). `keyed`: a crypt key was given
/// (a parse failure without one means "looks encrypted").
pub fn reader_err(path: &str, e: &ReaderError, keyed: bool) -> PyErr {
    let msg = format!("{path}: {e}");
    match e {
        ReaderError::MetaMissing { .. } | ReaderError::DataMissing { .. } => {
            StoreNotFoundError::new_err(msg)
        }
        ReaderError::Io { .. } | ReaderError::NotAFile { .. } => StoreIOError::new_err(msg),
        ReaderError::Undecryptable { .. } => WrongKeyError::new_err(msg),
        // A writer kept changing the store: not damage; the base class, try again.
        ReaderError::Busy { .. } => MMKVReaderError::new_err(msg),
        e if e.is_parse_error() && !keyed => EncryptedStoreError::new_err(format!(
            "{msg} (the region does not parse as plaintext records: it looks encrypted, pass crypt_key; or it is damaged)"
        )),
        _ => CorruptStoreError::new_err(msg),
    }
}

/// An inspector error (from `mmkv_inspect::analysis::Analysis`).
pub fn inspect_err(e: &InspectError, keyed: bool) -> PyErr {
    match e {
        InspectError::Reader { path, source } => {
            reader_err(&path.display().to_string(), source, keyed)
        }
        InspectError::LooksEncrypted { .. } => EncryptedStoreError::new_err(e.to_string()),
        InspectError::WrongKey { .. } => WrongKeyError::new_err(e.to_string()),
        InspectError::ZeroRecords { .. } => CorruptStoreError::new_err(e.to_string()),
        InspectError::BadArgument(m) => PyValueError::new_err(m.clone()),
        InspectError::Io { .. } => StoreIOError::new_err(e.to_string()),
        _ => MMKVReaderError::new_err(e.to_string()),
    }
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MMKVReaderError", py.get_type::<MMKVReaderError>())?;
    m.add("StoreNotFoundError", py.get_type::<StoreNotFoundError>())?;
    m.add("StoreIOError", py.get_type::<StoreIOError>())?;
    m.add("CorruptStoreError", py.get_type::<CorruptStoreError>())?;
    m.add("EncryptedStoreError", py.get_type::<EncryptedStoreError>())?;
    m.add("WrongKeyError", py.get_type::<WrongKeyError>())?;
    Ok(())
}
