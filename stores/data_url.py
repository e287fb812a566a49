"""The data URL: where a workspace keeps the data that workers on other hosts share.

A workspace's shared data (the Parquet hand-off shards of the Beam stages, the LanceDB
tables, the per-snapshot graph indexes and the R-GCN warm-start weights) lives under one
location: by default the workspace folder itself, else a data URL, `s3://bucket/prefix`
(AWS S3 or any S3-compatible store: MinIO, Ceph, Cloudflare R2, Google Cloud Storage
through its S3 interoperability endpoint) or another local folder (a shared mount, as a
plain path or `file://` URL). The DuckDB catalog, the Dagster instance, caches, locks and
progress files stay in the workspace folder (`stores.workspace`).

Locations are plain strings, an absolute local path or a URL, joined with `/`, because
every consumer takes strings: Beam's filesystems (`s3://` through its `apache_beam.io.aws`
filesystem), pyarrow's filesystems (here) and LanceDB's object store.

Access to S3 comes from the standard AWS environment of each process, never from a
setting of ours, so that no secret is written to the workspace or to Beam's pipeline
options (which a runner may display): `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
`AWS_SESSION_TOKEN` (else the SDKs' default chain: profile, instance role), the endpoint
of an S3-compatible store in `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`, and the region in
`AWS_REGION` or `AWS_DEFAULT_REGION` (default `us-east-1`, which S3-compatible stores
accept). An `http://` endpoint allows plain HTTP (a store on the loopback or a private
network); there is no separate switch, since the endpoint's scheme already says it.

Only `s3://` is accepted of the object-store schemes: `gs://` and `az://` would need
extra Beam packages (`apache-beam[gcp]`, `[azure]`) and name Azure differently in Beam
(`azfs://`) and LanceDB (`az://`), so they are refused with a one-line error rather than
failing half way through a build.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

if TYPE_CHECKING:
    import pyarrow.fs as pafs

DATA_URL_ENV = "KGMEM_DATA_URL"
DEFAULT_REGION = "us-east-1"
CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 60.0
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def normalize(url: str) -> str:
    """`url` in canonical form, `s3://bucket[/prefix]` without a trailing slash or an
    absolute local folder; a ValueError naming the URL and what is wrong otherwise."""
    text = url.strip()
    if "://" not in text:
        if not text:
            raise ValueError("data URL is empty")
        return str(Path(text).expanduser().resolve())
    parsed = urlparse(text)
    if parsed.scheme == "file":
        return str(Path(parsed.path).resolve())
    if parsed.scheme != "s3":
        raise ValueError(
            f"data URL {url}: scheme {parsed.scheme}:// is not supported; use s3://bucket/prefix "
            "(AWS S3 or an S3-compatible store such as MinIO or GCS interoperability) "
            "or a local folder"
        )
    if not _BUCKET.match(parsed.netloc):
        raise ValueError(f"data URL {url}: {parsed.netloc!r} is not a valid S3 bucket name")
    prefix = parsed.path.strip("/")
    return f"s3://{parsed.netloc}" + (f"/{prefix}" if prefix else "")


def is_remote(location: str) -> bool:
    """Whether `location` is an object-store URL rather than a local path."""
    return "://" in location


def join(base: str, *parts: str) -> str:
    """`base` with `parts` appended, `/`-separated (a local path or a URL alike)."""
    return "/".join([base.rstrip("/"), *parts])


@dataclass(frozen=True)
class S3Access:
    """How this process reaches S3: endpoint, region and credentials from its environment
    (see the module docstring); credentials left None use the SDKs' default chain."""

    endpoint: str | None
    region: str
    access_key: str | None
    secret_key: str | None
    session_token: str | None

    @classmethod
    def from_env(cls) -> S3Access:
        env = os.environ
        return cls(
            endpoint=env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
            access_key=env.get("AWS_ACCESS_KEY_ID") or None,
            secret_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
            session_token=env.get("AWS_SESSION_TOKEN") or None,
        )

    @property
    def allow_http(self) -> bool:
        return bool(self.endpoint and self.endpoint.startswith("http://"))

    def describe(self) -> str:
        return f"endpoint {self.endpoint}" if self.endpoint else f"AWS S3 ({self.region})"


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem of `location` and the path within it (`bucket/key` for S3)."""
    import pyarrow.fs as pafs

    if not is_remote(location):
        return pafs.LocalFileSystem(), location
    canonical = normalize(location)
    return _s3_filesystem(S3Access.from_env()), canonical.removeprefix("s3://")


@lru_cache(maxsize=4)
def _s3_filesystem(access: S3Access) -> pafs.FileSystem:
    """One client per distinct access (connections are pooled inside it)."""
    import pyarrow.fs as pafs

    return pafs.S3FileSystem(
        access_key=access.access_key,
        secret_key=access.secret_key,
        session_token=access.session_token,
        region=access.region,
        endpoint_override=access.endpoint,
        scheme="http" if access.allow_http else "https",
        connect_timeout=CONNECT_TIMEOUT_S,
        request_timeout=REQUEST_TIMEOUT_S,
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=3),
    )


def lance_storage_options(location: str) -> dict[str, str] | None:
    """LanceDB's `storage_options` for tables under `location` (None for a local one)."""
    if not is_remote(location):
        return None
    access = S3Access.from_env()
    options = {"aws_region": access.region}
    if access.endpoint:
        options["aws_endpoint"] = access.endpoint
    if access.allow_http:
        options["allow_http"] = "true"
    for key, value in (
        ("aws_access_key_id", access.access_key),
        ("aws_secret_access_key", access.secret_key),
        ("aws_session_token", access.session_token),
    ):
        if value:
            options[key] = value
    return options


def beam_flags(location: str) -> list[str]:
    """Beam's S3 options for a pipeline reading and writing under `location`: endpoint and
    region only; its boto3 client takes the credentials from each worker's environment."""
    if not is_remote(location):
        return []
    access = S3Access.from_env()
    flags = [f"--s3_region_name={access.region}"]
    if access.endpoint:
        flags.append(f"--s3_endpoint_url={access.endpoint}")
    return flags


def check_reachable(location: str) -> None:
    """Raise a one-line OSError naming `location` and the reason when its bucket cannot be
    reached (no server at the endpoint, no bucket, access denied); a local location is
    created."""
    import pyarrow.fs as pafs

    if not is_remote(location):
        Path(location).mkdir(parents=True, exist_ok=True)
        return
    access = S3Access.from_env()
    fs, path = filesystem(location)
    bucket = path.split("/", 1)[0]
    try:
        found = fs.get_file_info(bucket)
    except OSError as exc:
        reason = " ".join(str(exc).split())
        if "ACCESS_DENIED" in reason or "403" in reason:
            reason += " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile with access)"
        message = f"data URL {location}: cannot reach it at {access.describe()}: {reason}"
        raise OSError(message) from None
    if found.type == pafs.FileType.NotFound:
        raise OSError(
            f"data URL {location}: bucket {bucket!r} does not exist at {access.describe()}; "
            "create it first"
        )


def read_bytes(location: str) -> bytes | None:
    """The content of the file at `location`, or None if there is none."""
    fs, path = filesystem(location)
    try:
        with fs.open_input_stream(path) as stream:
            return stream.read()
    except FileNotFoundError:
        return None


def write_bytes(location: str, data: bytes) -> None:
    """Write `data` to `location` so that a reader sees the old content or the new, whole:
    locally through a staging file renamed into place, on S3 by one PUT (an object
    appears whole)."""
    if is_remote(location):
        fs, path = filesystem(location)
        with fs.open_output_stream(path) as stream:
            stream.write(data)
        return
    target = Path(location)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    staging.write_bytes(data)
    os.replace(staging, target)


def list_files(folder: str) -> list[str]:
    """Locations of the files directly in `folder`, sorted (none if it does not exist)."""
    import pyarrow.fs as pafs

    fs, path = filesystem(folder)
    selector = pafs.FileSelector(path, allow_not_found=True)
    names = [i.base_name for i in fs.get_file_info(selector) if i.type == pafs.FileType.File]
    return [join(folder, name) for name in sorted(names)]


def delete(locations: Iterable[str]) -> None:
    """Remove these files (a missing one is no error)."""
    for location in locations:
        fs, path = filesystem(location)
        with contextlib.suppress(FileNotFoundError):
            fs.delete_file(path)


def delete_folder(folder: str) -> None:
    """Remove `folder` and everything under it (nothing if it does not exist)."""
    fs, path = filesystem(folder)
    with contextlib.suppress(FileNotFoundError):
        fs.delete_dir(path)


def upload_folder(local: Path, location: str, last: str) -> None:
    """Copy the files of the local folder `local` to `location` (streamed, multipart on S3),
    the file named `last` after all others: a reader that waits for `last` never sees a
    partial upload."""
    names = sorted(p.name for p in local.iterdir() if p.is_file() and p.name != last)
    _copy([*names, last], str(local), location)


def download_folder(location: str, local: Path, last: str) -> None:
    """Copy the files of `location` into the new local folder `local`, `last` at the end."""
    local.mkdir(parents=True)
    names = [name.rsplit("/", 1)[-1] for name in list_files(location)]
    _copy([*(n for n in names if n != last), last], location, str(local))


def _copy(names: list[str], source: str, destination: str) -> None:
    import pyarrow.fs as pafs

    source_fs, source_path = filesystem(source)
    destination_fs, destination_path = filesystem(destination)
    for name in names:
        pafs.copy_files(
            f"{source_path}/{name}",
            f"{destination_path}/{name}",
            source_filesystem=source_fs,
            destination_filesystem=destination_fs,
        )
