"""Locate, verify (SHA-256) and load MNIST / Fashion-MNIST, and the paper's 5-vs-8 task.

Search order for the four standard ``*-idx?-ubyte.gz`` files of a data set ``<name>``:

1. the ``data_dir`` argument (``--data-dir``), used as is or with ``<name>/`` appended;
2. the environment variable ``$DARRM_DATA`` (same two forms);
3. only when running from a source checkout (:func:`~darrm.experiments.data.locations.source_checkout`):
   ``<checkout>/../shared/datasets/<name>/`` and ``<checkout>/data/<name>/``;
4. the user data directory, ``<platformdirs user_data_dir>/<name>/`` (where an installed
   package downloads to);
5. Debian's ``/usr/share/datasets/fashion-mnist/`` (package ``dataset-fashion-mnist``).

A folder named by ``data_dir`` or ``$DARRM_DATA`` is the *only* place searched (and where a
download goes): when it lacks a file the run downloads into it or reports the option, never
silently uses another copy; one that exists and is no folder is a ParameterError naming the
option.  An unreadable candidate folder is skipped, never fatal.

Nothing is looked up relative to the installed package (``site-packages``) or the current
directory.  When none holds all four files and ``download=True``, the official files are
fetched into ``<data_dir>/<name>/`` (atomic writes), ``data_dir`` from
:func:`darrm.experiments.data.locations.data_dir` (``$DARRM_DATA``, ``<checkout>/data``, or the
user data directory).  Every file, found or downloaded, is checked
against the SHA-256 of its **decompressed** content: the gzip wrappers of equally valid
copies differ (the shared MNIST train-images was re-gzipped with an unknown MTIME;
Debian strips the gzip header), the IDX content does not.  The known ``.gz`` hashes of the
shared copies are embedded as well and reported by :func:`verify_file`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from darrm.atomic import atomic_write_bytes
from darrm.errors import DarrmError, ParameterError
from darrm.experiments.data import locations
from darrm.experiments.data.idx import IdxFormatError, parse_idx

__all__ = [
    "DATASETS",
    "FILES",
    "BinaryTask",
    "DatasetError",
    "Dataset",
    "binary_task",
    "candidate_dirs",
    "download",
    "explicit_data_dir",
    "find_dataset_dir",
    "load_dataset",
    "verify_file",
]

DATASETS = ("mnist", "fashion-mnist")
FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)

#: SHA-256 of the decompressed IDX content (authoritative; from shared/datasets/SOURCES.md,
#: equal to the official files' content: MNIST md5s match LeCun's published ones).
CONTENT_SHA256: dict[str, dict[str, str]] = {
    "mnist": {
        "train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
        "train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
        "t10k-images-idx3-ubyte": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
        "t10k-labels-idx1-ubyte": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
    },
    "fashion-mnist": {
        "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
        "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
        "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
        "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
    },
}

#: Size in bytes of the decompressed IDX content (the same for both data sets): a file that
#: inflates past it is refused while inflating, so a gzip bomb never fills memory.
CONTENT_SIZE: dict[str, int] = {
    "train-images-idx3-ubyte": 16 + 60000 * 28 * 28,
    "train-labels-idx1-ubyte": 8 + 60000,
    "t10k-images-idx3-ubyte": 16 + 10000 * 28 * 28,
    "t10k-labels-idx1-ubyte": 8 + 10000,
}

#: bytes read at a time while hashing and inflating
_CHUNK = 1 << 20

#: SHA-256 of the ``.gz`` files (shared/datasets/SHA256SUMS; Fashion-MNIST = the official
#: release files).  Informational: a different wrapper around the right content is accepted.
GZ_SHA256: dict[str, dict[str, str]] = {
    "mnist": {
        "train-images-idx3-ubyte": "ae46c4f260ac4905871204038b01a6c0a113631ad2d5a23f68961fc8b88747cb",
        "train-labels-idx1-ubyte": "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        "t10k-images-idx3-ubyte": "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        "t10k-labels-idx1-ubyte": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    },
    "fashion-mnist": {
        "train-images-idx3-ubyte": "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
        "train-labels-idx1-ubyte": "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
        "t10k-images-idx3-ubyte": "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
        "t10k-labels-idx1-ubyte": "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
    },
}

#: Official download locations, tried in order (content verified after download).
URLS: dict[str, tuple[str, ...]] = {
    "mnist": (
        "https://ossci-datasets.s3.amazonaws.com/mnist/",  # PyTorch's mirror of LeCun's files
        "http://yann.lecun.com/exdb/mnist/",
    ),
    "fashion-mnist": ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),
}

DEBIAN_DIRS = {"fashion-mnist": Path("/usr/share/datasets/fashion-mnist")}


class DatasetError(DarrmError):
    """A data set is missing, corrupt, or fails its checksum."""


def _check_name(name: str) -> str:
    if name not in DATASETS:
        raise ParameterError("dataset", f"must be one of {DATASETS}, got {name!r}")
    return name


def candidate_dirs(name: str, data_dir: str | os.PathLike | None = None) -> list[Path]:
    """Directories searched for ``name``'s files, in order (see the module docstring).

    Args:
        name: ``"mnist"`` or ``"fashion-mnist"``.
        data_dir: the folder the user named (``--data-dir``), or None.

    Returns:
        The folders, without repeats, whether or not they exist.

    Raises:
        ParameterError: an unknown ``name`` (naming ``dataset``).
    """
    _check_name(name)
    out: list[Path] = []
    for base in (data_dir, os.environ.get("DARRM_DATA")):
        if base:
            out += [Path(base), Path(base) / name]
    root = locations.source_checkout()
    if root is not None:
        out += [root.parent / "shared" / "datasets" / name, root / "data" / name]
    out.append(locations.user_data_dir() / name)
    if name in DEBIAN_DIRS:
        out.append(DEBIAN_DIRS[name])
    seen: set[Path] = set()
    unique = []
    for p in out:
        try:
            key = p.resolve() if p.exists() else p
        except OSError:  # an unreadable folder on the way
            key = p
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def _has_all(d: Path) -> bool:
    """``d`` is a folder holding all four files; False (not an error) where it cannot be read."""
    try:
        return d.is_dir() and all((d / f"{f}.gz").is_file() or (d / f).is_file() for f in FILES)
    except OSError:  # an unreadable candidate (EACCES): skipped, never fatal
        return False


def explicit_data_dir(data_dir: str | os.PathLike | None = None) -> tuple[str, Path] | None:
    """The folder the user named — ``data_dir`` (``--data-dir``), else ``$DARRM_DATA`` — with the
    option's name, or None.  A named folder is the only place searched (and downloaded to): its
    files missing are reported, never skipped in favour of another copy.

    Args:
        data_dir: ``--data-dir``, or None.

    Returns:
        (the option's name, the folder), or None when neither is set.

    Raises:
        ParameterError: (``data-dir`` or ``DARRM_DATA``) it exists and is not a folder.
    """
    for opt, base in (("data-dir", data_dir), ("DARRM_DATA", os.environ.get("DARRM_DATA"))):
        if base:
            b = Path(base)
            if b.exists() and not b.is_dir():
                raise ParameterError(opt, f"{base} is not a directory")
            return opt, b
    return None


def find_dataset_dir(name: str, data_dir: str | os.PathLike | None = None) -> Path | None:
    """First candidate directory that holds all four files (``.gz`` or uncompressed), or None.
    With a folder named by ``data_dir`` or ``$DARRM_DATA`` only it (and its ``<name>/``) is searched.

    Args:
        name: ``"mnist"`` or ``"fashion-mnist"``.
        data_dir: the folder the user named (``--data-dir``), or None.

    Returns:
        The folder, or None when no candidate holds the four files.

    Raises:
        ParameterError: the named folder exists and is not a folder, or an unknown ``name``.
    """
    named = explicit_data_dir(data_dir)
    cands = [named[1], named[1] / name] if named is not None else candidate_dirs(name)
    for d in cands:
        if _has_all(d):
            return d
    return None


def verify_file(name: str, path: Path) -> tuple[np.ndarray, dict[str, str]]:
    """Read ``path`` (one of :data:`FILES`, gz or raw) and check its content SHA-256.

    Args:
        name: ``"mnist"`` or ``"fashion-mnist"``.
        path: the file.

    Returns:
        (the array, a record of the file: path, content and ``.gz`` SHA-256).

    Raises:
        DatasetError: not one of the data set's files, unreadable, corrupt, or a checksum mismatch.
    """
    stem = path.name[:-3] if path.name.endswith(".gz") else path.name
    if stem not in CONTENT_SHA256[name]:
        raise DatasetError(f"{path}: not one of the {name} files {FILES}")
    try:
        with open(path, "rb") as fh:
            content, digest, gz_digest = _read_content(fh, stem, str(path))
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    expected = CONTENT_SHA256[name][stem]
    if digest != expected:
        raise DatasetError(
            f"{path}: SHA-256 of the decompressed content is {digest}, expected {expected} "
            f"(corrupt or wrong file; delete it and re-download, see docs/experiments.md)"
        )
    try:
        arr = parse_idx(content, str(path))
    except IdxFormatError as exc:  # pragma: no cover - hash already matched a valid file
        raise DatasetError(str(exc)) from exc
    info = {
        "path": str(path),
        "content_sha256": digest,
        "gz_sha256": gz_digest,
        "gz_matches_shared_copy": str(gz_digest == GZ_SHA256[name][stem]),
    }
    return arr, info


class _HashingReader(io.RawIOBase):
    """A read-only file wrapper that hashes every byte read through it (the ``.gz`` SHA-256)."""

    def __init__(self, fh):
        self.fh, self.sha = fh, hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.fh.read(len(b))
        self.sha.update(data)
        b[: len(data)] = data
        return len(data)


def _read_content(fh, stem: str, name: str) -> tuple[bytes, str, str]:
    """(content, content SHA-256, file SHA-256) of an IDX file, gzip-compressed or not.

    Reads and inflates in chunks, hashing as it goes, and stops with :class:`DatasetError` as
    soon as the content passes :data:`CONTENT_SIZE` of ``stem``: memory stays bounded by the
    size of the real file whatever the input.
    """
    limit = CONTENT_SIZE[stem]
    gzipped = fh.read(2) == b"\x1f\x8b"
    fh.seek(0)
    raw = _HashingReader(fh)
    stream = gzip.GzipFile(fileobj=io.BufferedReader(raw), mode="rb") if gzipped else io.BufferedReader(raw)
    content = bytearray()
    sha = hashlib.sha256()
    try:
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                break
            if len(content) + len(chunk) > limit:
                raise DatasetError(f"{name}: content is larger than the {limit} bytes of {stem} "
                                   f"(corrupt or wrong file; delete it and re-download)")
            sha.update(chunk)
            content += chunk
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise DatasetError(f"{name}: corrupt gzip stream ({exc})") from None
    while raw.read(_CHUNK):  # hash the rest of the file (trailing bytes, if any)
        pass
    return bytes(content), sha.hexdigest(), raw.sha.hexdigest()


def download(name: str, dest: Path | None = None, timeout: float = 30.0) -> Path:
    """Download the four official files of ``name`` into ``dest`` (default
    ``locations.data_dir() / name``: ``$DARRM_DATA``, ``<checkout>/data`` or the user data directory).

    Each file is verified (content SHA-256) before it is atomically moved into place.

    Args:
        name: ``"mnist"`` or ``"fashion-mnist"``.
        dest: the folder for the four files.
        timeout: seconds per connection attempt.

    Returns:
        ``dest``.

    Raises:
        ParameterError: an unknown ``name``.
        DatasetError: a file could be fetched from none of the mirrors (each attempt is listed).
    """
    _check_name(name)
    dest = Path(dest) if dest is not None else locations.data_dir() / name
    errors: list[str] = []
    for stem in FILES:
        target = dest / f"{stem}.gz"
        if target.is_file():
            try:
                verify_file(name, target)
                continue
            except DatasetError:
                target.unlink()
        for base in URLS[name]:
            url = base + f"{stem}.gz"
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (fixed https/http URLs)
                    raw = resp.read(CONTENT_SIZE[stem] + _CHUNK + 1)  # a .gz is never much larger
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                errors.append(f"{url}: {exc}")
                continue
            try:
                _, digest, _ = _read_content(io.BytesIO(raw), stem, url)
            except DatasetError as exc:
                errors.append(str(exc))
                continue
            if digest != CONTENT_SHA256[name][stem]:
                errors.append(f"{url}: checksum mismatch, discarded")
                continue
            atomic_write_bytes(target, raw)
            break
        else:
            raise DatasetError(_missing_message(name, None, errors))
    return dest


def _missing_message(name: str, data_dir, errors: list[str] | None = None) -> str:
    searched = "\n  ".join(str(p) for p in candidate_dirs(name, data_dir))
    msg = (
        f"{name}: the files {', '.join(f + '.gz' for f in FILES)} were not found in any of\n  {searched}\n"
        f"Get them by one of: pass --data-dir DIR (or set $DARRM_DATA) to a folder holding them; "
        f"copy the project's shared/datasets/{name}/ folder next to the repository; "
        f"run with network access so they download into {locations.data_dir() / name}"
    )
    if name == "fashion-mnist":
        msg += "; or `apt-get install dataset-fashion-mnist` (Debian)"
    if errors:
        msg += "\nDownload attempts failed:\n  " + "\n  ".join(errors)
    return msg


@dataclass(frozen=True)
class Dataset:
    """A full 10-class data set: uint8 images ``(n, 28, 28)`` and uint8 labels ``(n,)``.

    Attributes:
        name: ``"mnist"`` or ``"fashion-mnist"``.
        train_images: the training images.
        train_labels: the training labels (0–9).
        test_images: the test images.
        test_labels: the test labels.
        source_dir: the folder the files were read from.
        files: a record of each file read (:func:`verify_file`).
    """

    name: str
    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    source_dir: str
    files: tuple[dict[str, str], ...] = field(default=())


def load_dataset(
    name: str, data_dir: str | os.PathLike | None = None, *, allow_download: bool = True
) -> Dataset:
    """Find, verify and load ``name`` (``"mnist"`` or ``"fashion-mnist"``).

    Args:
        name: the data set.
        data_dir: a folder holding its four files (or ``<name>/`` with them); None: ``$DARRM_DATA``,
            else the places of :func:`candidate_dirs`.
        allow_download: when no folder holds the files, download them (else raise).

    Returns:
        The :class:`Dataset`, every file checked against its SHA-256.

    Raises:
        ParameterError: an unknown ``name``, or a named folder that is not a folder.
        DatasetError: the files are missing (with where they were looked for and how to get them),
            corrupt, or fail their checksum.
    """
    _check_name(name)
    d = find_dataset_dir(name, data_dir)
    named = explicit_data_dir(data_dir)
    if d is None:
        if not allow_download:
            if named is not None:
                raise DatasetError(f"{named[0]}: {named[1]} does not hold the {name} files "
                                   f"({', '.join(f + '.gz' for f in FILES)}), neither directly nor in {name}/")
            raise DatasetError(_missing_message(name, data_dir))
        d = download(name, named[1] / name if named is not None else None)
    arrays, infos = [], []
    for stem in FILES:
        p = d / f"{stem}.gz"
        if not p.is_file():
            p = d / stem
        arr, info = verify_file(name, p)
        arrays.append(arr)
        infos.append(info)
    tr_x, tr_y, te_x, te_y = arrays
    if len(tr_x) != len(tr_y) or len(te_x) != len(te_y):
        raise DatasetError(f"{name}: images and labels counts differ")
    return Dataset(name, tr_x, tr_y, te_x, te_y, str(d), tuple(infos))


@dataclass(frozen=True)
class BinaryTask:
    """The paper's two-class task (Section 6.2): images of ``classes`` with their original labels.

    Attributes:
        name: the data set's name.
        classes: the two labels ``(a, b)``.
        train_images: the training images of the two classes.
        train_labels: their labels (``a`` or ``b``).
        test_images: the test images of the two classes.
        test_labels: their labels.
        train_indices: the training images' indices into the full training set.
        test_indices: the test images' indices into the full test set.
    """

    name: str
    classes: tuple[int, int]
    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    train_indices: np.ndarray  # indices into the full training set (record of the choice)
    test_indices: np.ndarray


def binary_task(
    ds: Dataset,
    classes: tuple[int, int] = (5, 8),
    train_size: int | None = None,
    seed: int = 0,
) -> BinaryTask:
    """Restrict ``ds`` to ``classes`` (labels kept as the original digits).

    ``train_size=None`` keeps every training image of the two classes (MNIST 11,272;
    Fashion-MNIST 12,000).  The paper reports 10,000 Fashion-MNIST training images without
    saying how they were chosen (Appendix D.2); ``train_size=10000`` takes a seeded
    uniformly random subset (kept in original order) to mimic it.

    Args:
        ds: the full data set (:func:`load_dataset`).
        classes: the two labels (distinct, in 0..9).
        train_size: the number of training images kept (None: all of the two classes).
        seed: the seed of the subset's choice.

    Returns:
        The :class:`BinaryTask`.

    Raises:
        ParameterError: bad ``classes`` or ``train_size``.
    """
    a, b = (int(c) for c in classes)
    if a == b or not (0 <= a <= 9 and 0 <= b <= 9):
        raise ParameterError("classes", f"two distinct labels in 0..9, got {classes!r}")
    tr = np.flatnonzero((ds.train_labels == a) | (ds.train_labels == b))
    te = np.flatnonzero((ds.test_labels == a) | (ds.test_labels == b))
    if train_size is not None:
        if not (1 <= train_size <= len(tr)):
            raise ParameterError("train_size", f"must be in [1, {len(tr)}], got {train_size}")
        keep = np.random.default_rng(seed).permutation(len(tr))[:train_size]
        tr = tr[np.sort(keep)]
    return BinaryTask(
        ds.name,
        (a, b),
        ds.train_images[tr],
        ds.train_labels[tr],
        ds.test_images[te],
        ds.test_labels[te],
        tr,
        te,
    )
