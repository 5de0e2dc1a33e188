"""Deletes on object stores, through ``obstore`` (Rust's ``object_store``).

pyarrow keeps the illusion of folders on S3: after deleting a file it PUTs an empty ``<parent>/``
marker object (HEAD, DELETE and PUT for one file). ``object_store`` deletes just the object, many
per request where the store can (S3's DeleteObjects: 1,000 keys; Azure's blob batch: 256), and
writes nothing else. It reads the same settings and the same AWS credential chain.
"""
from __future__ import annotations

import threading
from datetime import timedelta
from typing import Sequence

import obstore
from obstore.store import from_url

from .options import S3Settings

_stores: dict[tuple, object] = {}
_lock = threading.Lock()


def _s3_config(s3: S3Settings) -> tuple[dict, dict]:
    """object_store's S3 config and client options for the settings pyarrow's client gets."""
    args = dict(s3.kwargs)
    config: dict[str, object] = {}
    client: dict[str, object] = {}
    if "endpoint_override" in args:
        config["endpoint"] = f"{args['scheme']}://{args['endpoint_override']}"
        client["allow_http"] = args["scheme"] == "http"
        config["virtual_hosted_style_request"] = bool(args.get("force_virtual_addressing"))
    for ours, theirs in (("access_key", "access_key_id"), ("secret_key", "secret_access_key"),
                         ("session_token", "session_token"), ("region", "region")):
        if ours in args:
            config[theirs] = args[ours]
    if args.get("anonymous"):
        config["skip_signature"] = True
    if "connect_timeout" in args:
        client["connect_timeout"] = timedelta(seconds=float(args["connect_timeout"]))
    return config, client


def store_for(scheme: str, authority: str, s3: S3Settings | None) -> object:
    """One client per store and settings. ``authority``: the bucket (the container@account of
    abfs[s]://, which configure themselves from the environment, as gs:// does)."""
    key = (scheme, authority, s3)
    with _lock:
        store = _stores.get(key)
        if store is None:
            retry = {"max_retries": s3.attempts - 1 if s3 else 4, "retry_timeout": timedelta(minutes=3)}
            if s3 is not None:
                config, client = _s3_config(s3)
                store = from_url(f"s3://{authority}", config=config, client_options=client, retry_config=retry)
            else:
                store = from_url(f"{scheme}://{authority}", retry_config=retry)
            _stores[key] = store
        return store


def delete_objects(store: object, keys: Sequence[str]) -> None:
    """Delete ``keys`` (missing ones are fine)."""
    if keys:
        try:
            obstore.delete(store, list(keys))
        except FileNotFoundError:
            if len(keys) > 1:   # stores that fail a batch on a missing key: one at a time
                for k in keys:
                    delete_objects(store, [k])
