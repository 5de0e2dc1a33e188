"""Desired children (the planner's manifests) against the live ones: what to create, patch or delete.

The planner annotates each manifest with the hash of what it asks for. A live object whose
annotation differs from the plan's was made from an older spec, so it is updated; one whose own
content no longer hashes to its annotation was changed by hand (drift), so it is put back. Only
objects this resource controls are touched or pruned: a same-named object of someone else's is
reported, never overwritten."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..planner.labels import SPARK_KINDS, SPEC_HASH_ANNOTATION, spec_hash

CREATE, PATCH, DELETE, CONFLICT = "create", "patch", "delete", "conflict"
# Kinds whose status belongs to one run of one spec: a changed spec replaces the object (deleted
# now, created again once gone), so its status never describes the previous spec's run. Fields
# the Spark operator acts on in place (``suspend``) are patched.
RECREATED_KINDS = frozenset({"SparkApplication"})
IN_PLACE_FIELDS = ("suspend",)


@dataclass(frozen=True)
class Action:
    verb: str                      # create | patch | delete | conflict (nothing is sent for a conflict)
    api_version: str
    kind: str
    namespace: str
    name: str
    body: dict[str, Any] | None    # the manifest to create, or the JSON merge patch (RFC 7386)
    reason: str                    # the event reason: Created, Updated, DriftCorrected, Replacing, Pruned
    message: str


def spark_application(manifests: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    return next((m for m in manifests if m["kind"] in SPARK_KINDS), None)


def key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def controller_uid(obj: dict[str, Any]) -> str | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref.get("uid")
    return None


def diff(desired: Iterable[dict[str, Any]], live: Iterable[dict[str, Any]], owner_uid: str | None,
         recreated_kinds: frozenset[str] = RECREATED_KINDS) -> list[Action]:
    """Actions that bring ``live`` (this resource's children as listed by label) to ``desired``
    (in apply order): creates and updates in that order, then deletions of what is no longer planned."""
    live_by_key = {key(obj): obj for obj in live}
    actions: list[Action] = []
    planned = set()
    for manifest in desired:
        planned.add(key(manifest))
        current = live_by_key.get(key(manifest))
        action = _converge(manifest, current, owner_uid, recreated_kinds)
        if action is not None:
            actions.append(action)
    for obj in reversed(list(live_by_key.values())):
        if key(obj) in planned or _deleting(obj) or not _ours(obj, owner_uid):
            continue
        actions.append(_action(DELETE, obj, None, "Pruned", "no longer planned"))
    return actions


def drifted(live: dict[str, Any], desired: dict[str, Any]) -> bool:
    """Whether the live object's own content no longer matches the hash it was created with. Labels
    others add (or a server adds) are ignored; labels of the plan that were changed are not."""
    recorded = live.get("metadata", {}).get("annotations", {}).get(SPEC_HASH_ANNOTATION)
    return recorded != spec_hash(_projection(live, desired))


def merge_patch(old: Any, new: Any) -> Any:
    """The RFC 7386 merge patch that turns ``old`` into ``new`` (null deletes a key)."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return new
    patch: dict[str, Any] = {k: None for k in old if k not in new}
    for k, value in new.items():
        if k not in old:
            patch[k] = value
        elif old[k] != value:
            patch[k] = merge_patch(old[k], value)
    return patch


def _converge(manifest: dict[str, Any], current: dict[str, Any] | None, owner_uid: str | None,
              recreated_kinds: frozenset[str]) -> Action | None:
    if current is None:
        return _action(CREATE, manifest, manifest, "Created", "created")
    if _deleting(current):
        return None                                     # created again once it is gone
    if not _ours(current, owner_uid):
        return _action(CONFLICT, manifest, None, "NameConflict",
                       "an object of this name exists and is not controlled by this resource; "
                       "rename or delete it")
    wanted = manifest["metadata"]["annotations"][SPEC_HASH_ANNOTATION]
    recorded = current.get("metadata", {}).get("annotations", {}).get(SPEC_HASH_ANNOTATION)
    if recorded != wanted:
        if manifest["kind"] in recreated_kinds and _run_spec(current) != _run_spec(manifest):
            return _action(DELETE, current, None, "Replacing",
                           "the spec changed: deleted, and created again from the new spec once gone")
        return _action(PATCH, manifest, _patch(current, manifest), "Updated", "updated to the new spec")
    if drifted(current, manifest):
        return _action(PATCH, manifest, _patch(current, manifest), "DriftCorrected",
                       "changed outside the operator; restored to the plan")
    return None


def _run_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in (obj.get("spec") or {}).items() if k not in IN_PLACE_FIELDS}


def _patch(live: dict[str, Any], desired: dict[str, Any]) -> dict[str, Any]:
    """Labels and annotations of the plan are set (others kept), owner references replaced, and
    spec/data made exactly the plan's."""
    meta = desired["metadata"]
    patch: dict[str, Any] = {"metadata": {"labels": dict(meta.get("labels") or {}),
                                          "annotations": dict(meta.get("annotations") or {})}}
    if "ownerReferences" in meta:
        patch["metadata"]["ownerReferences"] = meta["ownerReferences"]
    for part in ("spec", "data"):
        if part in desired or part in live:
            change = merge_patch(live.get(part), desired.get(part))
            if change != {}:
                patch[part] = change
    return patch


def _projection(live: dict[str, Any], desired: dict[str, Any]) -> dict[str, Any]:
    meta = live.get("metadata", {})
    planned_labels = desired.get("metadata", {}).get("labels")
    labels = (None if planned_labels is None
              else {k: v for k, v in (meta.get("labels") or {}).items() if k in planned_labels})
    projected_meta = {"name": meta.get("name"), "labels": labels}
    if meta.get("ownerReferences") is not None:
        projected_meta["ownerReferences"] = meta["ownerReferences"]
    projected = {"apiVersion": live.get("apiVersion"), "kind": live.get("kind"), "metadata": projected_meta}
    for part in ("spec", "data"):
        if part in live:
            projected[part] = live[part]
    return projected


def _ours(obj: dict[str, Any], owner_uid: str | None) -> bool:
    return owner_uid is None or controller_uid(obj) == owner_uid


def _deleting(obj: dict[str, Any]) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def _action(verb: str, obj: dict[str, Any], body: dict[str, Any] | None, reason: str, message: str) -> Action:
    meta = obj["metadata"]
    return Action(verb, obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"], body, reason,
                  f"{obj['kind']} {meta['name']} {message}")
