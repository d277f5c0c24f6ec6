"""The build backend of `pip install ./python` (PEP 517), in the tree: the package is pure Python, so the
wheel is a zip of wattwise/ and its metadata, made with the standard library. Nothing is fetched (pip's
build isolation installs the empty `requires` of pyproject.toml, so it works offline) and nothing is written
into the source tree (setuptools left build/ and wattwise.egg-info there)."""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "wattwise"
SUMMARY = "Phase markers and training callbacks for jobs measured by wattwise (GPU energy)"
REQUIRES_PYTHON = ">=3.8"
LICENSE = "Apache-2.0"
# The framework callbacks import their framework only when used: extras, never dependencies.
EXTRAS = {"torch": ["torch"], "lightning": ["lightning>=2"], "huggingface": ["transformers>=4"],
          "keras": ["keras>=3"]}
TAG = "py3-none-any"


def _version():
    # One place for the version: wattwise.__version__, which a test checks against CMakeLists.txt's.
    with open(os.path.join(HERE, NAME, "__init__.py"), encoding="utf-8") as init:
        match = re.search(r'^__version__ = "([^"]+)"', init.read(), re.MULTILINE)
    if not match:
        raise RuntimeError("no __version__ in wattwise/__init__.py")
    return match.group(1)


def _package_files():
    """(path in the archive, path on disk) of every file of the package, sorted; no caches."""
    files = []
    for directory, subdirectories, names in os.walk(os.path.join(HERE, NAME)):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(directory, name)
            files.append((os.path.relpath(path, HERE).replace(os.sep, "/"), path))
    return files


def _metadata(version):
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + version, "Summary: " + SUMMARY,
             "License: " + LICENSE, "Requires-Python: " + REQUIRES_PYTHON]
    for extra, requirements in EXTRAS.items():
        lines.append("Provides-Extra: " + extra)
        lines.extend('Requires-Dist: %s ; extra == "%s"' % (r, extra) for r in requirements)
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as readme:
        return "\n".join(lines) + "\n\n" + readme.read()


def _wheel_metadata():
    return "Wheel-Version: 1.0\nGenerator: wattwise _build_backend\nRoot-Is-Purelib: true\nTag: %s\n" % TAG


def _write_wheel(wheel_directory, entries):
    """entries: (archive path, bytes); adds the RECORD and returns the wheel's file name."""
    version = _version()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    entries = list(entries) + [(dist_info + "/METADATA", _metadata(version).encode("utf-8")),
                               (dist_info + "/WHEEL", _wheel_metadata().encode("utf-8"))]
    record = []
    for path, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append(dist_info + "/RECORD,,")
    entries.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    filename = "%s-%s-%s.whl" % (NAME, version, TAG)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for archive_path, path in _package_files():
        with open(path, "rb") as source:
            entries.append((archive_path, source.read()))
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # `pip install -e ./python`: a .pth file that puts this directory on sys.path.
    return _write_wheel(wheel_directory, [("_wattwise_editable.pth", (HERE + "\n").encode("utf-8"))])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for name in ("pyproject.toml", "_build_backend.py", "README.md"):
            sdist.add(os.path.join(HERE, name), arcname=base + "/" + name)
        for archive_path, path in _package_files():
            sdist.add(path, arcname=base + "/" + archive_path)
        pkg_info = _metadata(_version()).encode("utf-8")
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(pkg_info)
        sdist.addfile(info, io.BytesIO(pkg_info))
    return filename
