"""Reader for the IDX file format of MNIST and Fashion-MNIST (numpy only).

IDX (LeCun et al.): a big-endian header ``00 00 <dtype> <ndim>`` followed by ``ndim``
big-endian uint32 dimension sizes, then the data in row-major order.  The images files
are ``(n, 28, 28)`` uint8 (magic 2051) and the label files ``(n,)`` uint8 (magic 2049).
"""

from __future__ import annotations

import gzip
import zlib

import numpy as np

from darrm.errors import DarrmError

__all__ = ["IdxFormatError", "decompress", "parse_idx"]

# IDX type byte -> numpy dtype (big-endian where it matters).
_IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


class IdxFormatError(DarrmError):
    """The bytes are not a well-formed (optionally gzip-compressed) IDX file."""


def decompress(raw: bytes, name: str = "file") -> bytes:
    """Return the IDX payload of ``raw``, gunzipping it when it starts with the gzip magic.

    Args:
        raw: the file's bytes (gzip-compressed or not).
        name: the file's name, for error messages.

    Returns:
        The uncompressed bytes.

    Raises:
        IdxFormatError: a corrupt gzip stream.
    """
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise IdxFormatError(f"{name}: corrupt gzip stream ({exc})") from exc


def parse_idx(data: bytes, name: str = "file") -> np.ndarray:
    """Parse uncompressed IDX bytes into a numpy array (native byte order, read-only copy-free view).

    Args:
        data: the uncompressed IDX bytes.
        name: the file's name, for error messages.

    Returns:
        The array, of the shape and element type the header gives.

    Raises:
        IdxFormatError: a bad magic, element type, dimension count, or a payload of the wrong size.
    """
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise IdxFormatError(f"{name}: bad IDX magic {data[:4]!r}")
    type_byte, ndim = data[2], data[3]
    if type_byte not in _IDX_DTYPES:
        raise IdxFormatError(f"{name}: unknown IDX element type 0x{type_byte:02x}")
    if ndim == 0:
        raise IdxFormatError(f"{name}: IDX file with zero dimensions")
    header_len = 4 + 4 * ndim
    if len(data) < header_len:
        raise IdxFormatError(f"{name}: truncated IDX header")
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = _IDX_DTYPES[type_byte]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) - header_len != expected:
        raise IdxFormatError(
            f"{name}: IDX payload has {len(data) - header_len} bytes, header {shape} needs {expected}"
        )
    arr = np.frombuffer(data, dtype=dtype, offset=header_len).reshape(shape)
    return arr.astype(dtype.newbyteorder("="), copy=False)
