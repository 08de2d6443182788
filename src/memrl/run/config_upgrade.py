"""Every spelling of a config record memrl has written or accepted, read as today's: ``upgrade``.

A config.json's ``"config"`` (and a sweep spec's ``base``) is today a field -> value record in which
each component is its registry's record, ``"core": {"kind": "lstm", "hidden": 128}`` (the
environment and a supervised run's task alike), and a supervised run's curriculum is ``stages``.
Earlier formats, oldest first:

1. supervised runs before the stages (2026-11-24): one warm-up, ``warmup_updates`` with
   ``warmup_task_args``; now the first (and only) of ``stages``.
2. supervised runs before the sequence models (2026-11-24, fa5a986; their records have no
   ``embed_dim``): ``"core": "htm"`` was App. B.4's PAI model, today's task model ``htm-pai``.
3. before components were held whole (to 2026-12-01): a component as its registered name, ``"core":
   "lstm"``, with its settings by name beside it, ``"core_args": {"hidden": 128}`` (``env``/
   ``env_args``, ``task``/``task_args`` likewise); a component left out was the learner's default.
   A sweep spec's base still spells a change to a saved run's component so: ``core_args`` over the
   saved core's settings, key by key.
"""

from __future__ import annotations


def upgrade(config_class, record: dict) -> dict:
    """A run folder's config ``record`` (the fields of a ``config_class`` config, in any format above)
    as today's: a supervised warm-up as one stage, the PAI model by its name, each component a
    record (``components_merged``)."""
    record = dict(record)
    if "warmup_updates" in record:
        updates, settings = record.pop("warmup_updates"), record.pop("warmup_task_args", None) or {}
        if updates:
            record["stages"] = [" ".join([str(updates), *(f"{key}={value}" for key, value in settings.items())])]
    if "task" in config_class.COMPONENTS and "embed_dim" not in record and record.get("core") == "htm":
        record["core"] = "htm-pai"  # a config.json holds every field: without embed_dim it predates fa5a986
    return components_merged(config_class, record)


def components_merged(config_class, record: dict) -> dict:
    """``record`` with each component a record ``{"kind": NAME, ...}``, its ``NAME_args`` merged in
    (a component left out is ``config_class``'s default name): format 3 above, and a sweep spec's base."""
    record = dict(record)
    for field in config_class.COMPONENTS:
        settings = record.pop(f"{field}_args", None) or {}
        if not isinstance(settings, dict):
            raise ValueError(f"{field}_args must be settings by name (a dict), got {settings!r}")
        held = record.get(field, config_class.default_name(field) if settings else None)
        if isinstance(held, str):
            held = {"kind": held}
        if settings:
            held = {**held, **settings}
        if held is not None:
            record[field] = held
    return record
