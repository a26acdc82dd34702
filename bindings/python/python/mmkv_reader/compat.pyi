import os
from typing import Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

from ._native import MMKVReaderError as MMKVError

_Key = Union[str, bytes]
_Path = Union[str, "os.PathLike[str]"]
_Value = Union[bool, int, float, str, bytes, List["_Value"]]

class CarvedRecord(NamedTuple):
    offset: int
    key: str
    container: bytes
    live_key: bool

def read_entries(path: _Path, key: Optional[_Key] = None, aes256: bool = False, recover: bool = False) -> List[Tuple[str, bytes]]: ...
def read_dict(
    path: _Path,
    key: Optional[_Key] = None,
    aes256: bool = False,
    recover: bool = False,
    type_hints: Optional[Mapping[_Key, str]] = None,
) -> Dict[str, _Value]: ...
def carve_slack(path: _Path, key: Optional[_Key] = None, aes256: bool = False) -> List[CarvedRecord]: ...
def decode_value(container: bytes) -> Optional[_Value]: ...
