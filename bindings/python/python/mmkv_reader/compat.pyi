from typing import List, NamedTuple, Optional

from ._native import MMKVReaderError
from ._native import _Key, _Path
from ._native import decode_value as decode_value
from ._native import read_dict as read_dict
from ._native import read_entries as read_entries

MMKVError = MMKVReaderError

class CarvedRecord(NamedTuple):
    offset: int
    key: str
    container: bytes
    live_key: bool

def carve_slack(path: _Path, key: Optional[_Key] = None, aes256: bool = False) -> List[CarvedRecord]: ...
