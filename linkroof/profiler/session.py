"""Profiles: putting one together (topology + environment + measurements), the
bundled reference, and the one resolver of `--profile` (id, prefix, file,
'reference', or the newest) shared by the CLI and the dashboard."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import secrets
from collections.abc import Sequence
from typing import Any

from ..errors import NoGpuError
from ..schema import Environment, Measurement, Profile, Skipped, Topology, Workload, kind_of
from .environment import collect_environment
from .recording import live_source
from .probe import probe_source

REFERENCE = "h200x2"  # the bundled profile (and recording) used when this machine has no GPU


_BUNDLED: dict[str, bytes] = {}  # name -> the decoded bundled profile, pickled (a fresh copy in 8 ms, not 120)


def bundled_profile(name: str = REFERENCE) -> Profile:
    """A profile measured on a real machine and shipped in linkroof/data/<name>.profile.json;
    each call returns a copy of its own (decoded once a process, then unpickled)."""
    import pickle
    from importlib import resources

    from ..schema import loads

    if name in _BUNDLED:
        profile = pickle.loads(_BUNDLED[name])
        _REFERENCE_IDS.add(profile.id)
        return profile

    path = resources.files("linkroof") / "data" / f"{name}.profile.json"
    if not path.is_file():
        from ..errors import LinkroofError

        raise LinkroofError(f"no bundled profile named {name!r}")
    profile = _as_reference(loads(path.read_text(), Profile), name)
    _BUNDLED[name] = pickle.dumps(profile, protocol=pickle.HIGHEST_PROTOCOL)
    return profile


_REFERENCE_IDS: set[str] = set()


def _as_reference(profile: Profile, name: str) -> Profile:
    """The bundled profile says what it is wherever it is shown: its topology's source
    names the reference and where and how it was recorded (the file keeps 'nvml')."""
    _REFERENCE_IDS.add(profile.id)
    topos = tuple(dataclasses.replace(t, source=f"bundled reference {name} (recorded through {t.source} on "
                                                f"{t.host.hostname}, {profile.created_at[:10]})")
                  if not t.source.startswith("bundled reference") else t for t in profile.topologies)
    return dataclasses.replace(profile, topologies=topos)


def is_reference(profile: Profile) -> bool:
    """Whether `profile` is a bundled reference (as loaded here, or stored in a store)."""
    if not _REFERENCE_IDS:
        bundled_profile()
    return profile.id in _REFERENCE_IDS or profile.topology.source.startswith("bundled reference")


def example_placements() -> tuple[Any, ...]:
    """The example dots shown beside the bundled reference (no GPU, no placements of the
    user's yet): kernels and a call measured on H200s by linkroof's developers, each
    named "example: ..." (linkroof/data/examples.placements.json; its maker:
    examples/roofline/make_placements.py)."""
    from importlib import resources

    from ..schema import loads

    text = (resources.files("linkroof") / "data" / "examples.placements.json").read_text()
    return loads(text, Profile).placements


def profile_kind(profile: Profile) -> str:
    """Profile.kind, the bundled reference also known by its id."""
    return "reference" if is_reference(profile) else profile.kind


def provenance(profile: Profile, here: Topology | None) -> str | None:
    """One line for the top of every view when the profile shown is not this machine's:
    the bundled reference, any profile where no GPU is here to compare, or a profile of
    another machine (GPU model, count, active NVLinks). None when it is this machine's."""
    from ..roofline.summaries import machine_differences

    gpus = {}
    for g in profile.topology.gpus:
        gpus[str(g.name)] = gpus.get(str(g.name), 0) + 1
    what = " + ".join(f"{n} x {k}" for k, n in gpus.items()) or "no GPUs"
    where = f"{what} on {', '.join(profile.hostnames)}, {profile.created_at[:10]}"
    if profile.kind == "imported":  # never "measured elsewhere": another tool's figures, said whose
        diffs = machine_differences(profile.topology, here) if here is not None and profile.topology.links_known \
            else []
        return (f"Imported results, not measured by linkroof: {profile.kind_words.split(' (')[0]} ({where})"
                + (f"; another machine: {'; '.join(diffs)}" if diffs else "") + ".")
    if is_reference(profile):
        return (f"This is linkroof's bundled reference profile, measured on another machine ({where}), not on this "
                "one" + (": no NVIDIA GPU here" if here is None else "") + ".")
    if here is None:
        return f"No NVIDIA GPU here: this profile was measured elsewhere ({where})."
    diffs = machine_differences(profile.topology, here)
    if diffs:
        return f"This profile describes another machine ({where}): {'; '.join(diffs)}."
    return None


def new_profile_id(now: _dt.datetime | None = None) -> str:
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def make_profile(topologies: Sequence[Topology], environments: Sequence[Environment],
                 measurements: Sequence[Measurement] = (), skipped: Sequence[Skipped] = (),
                 label: str = "", notes: Sequence[str] = ()) -> Profile:
    now = _dt.datetime.now(_dt.timezone.utc)
    return Profile(id=new_profile_id(now), created_at=now.isoformat(timespec="seconds"),
                   topologies=tuple(topologies), environments=tuple(environments),
                   measurements=tuple(measurements), skipped=tuple(skipped), label=label, notes=tuple(notes))


def probe_profile(allow_reference: bool = True) -> tuple[Profile, str | None]:
    """Probe this machine into a profile (topology + environment). With no GPU and
    `allow_reference`, use the bundled reference recording instead; the second value
    then says why, for the user."""
    try:
        source = live_source()
        try:
            topology = probe_source(source)
            env = collect_environment(source.nvml, len(topology.gpus))
        finally:
            source.close()
    except NoGpuError as e:
        if not allow_reference:
            raise
        reference = bundled_profile(REFERENCE)
        reason = (f"No NVIDIA GPU here ({e}); showing the bundled reference profile measured on a real "
                  f"2xH200 machine ({REFERENCE}, {len(reference.measurements)} measurements, "
                  f"{reference.created_at[:10]}), not this machine.")
        return reference, reason  # unchanged: the same document however often it is stored
    return make_profile([topology], [env], label="probe"), None


def _names_a_file(which: str) -> bool:
    """Whether `which` names an existing file (an over-long or odd name is no file)."""
    from pathlib import Path

    if len(which) > 4096 or "\x00" in which:
        return False
    try:
        return Path(which).exists() and not Path(which).is_dir()
    except (OSError, ValueError):
        return False


def resolve_profile(which: str | None, store_path: str | None = None,
                    files: bool = True) -> tuple[Profile, str | None]:
    """A profile by id (or unique prefix) in the store, a profile JSON file (where
    `files`: the CLI; never for the dashboard, whose input comes from anyone who can
    reach it), or 'reference' (the bundled profile); with `which` None, the newest
    measured profile in the store, else the bundled reference. The second value says
    which, when the user did not name one."""
    from ..store import Store, load_profile_file

    if which in ("reference", f"bundled:{REFERENCE}"):
        return bundled_profile(), None
    if which and files and _names_a_file(which):
        return load_profile_file(which), None
    with Store(store_path) as store:
        if which:
            return store.get(which), None
        latest, held = newest_measured(store)
    if latest is None:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(held.items()))
        return bundled_profile(), (f"No profile measured by linkroof in the store{f' (it holds {kinds})' if kinds else ''}"
                                   f"; using the bundled {REFERENCE} reference (an imported one is used only when "
                                   "named: --profile ID).")
    return latest, (f"Using profile {latest.id}, the newest measured by linkroof ({latest.label or 'no label'}, "
                    f"{latest.created_at[:19]}).")


def newest_measured(store: Any, scan: int = 500) -> tuple[Profile | None, dict[str, int]]:
    """The newest stored profile of kind 'measured' that reads back, and the kinds of
    the newer ones passed over (imports, saved placements), counted."""
    from ..errors import LinkroofError

    held: dict[str, int] = {}
    for row in store.list(limit=scan):
        k = kind_of(row["label"] or "", row["measurements"] or 0)
        if k == "measured" and not row.get("damaged"):
            try:
                return store.get(row["id"]), held
            except LinkroofError:
                continue  # damaged: passed over, marked by the store
        held[k] = held.get(k, 0) + 1
    return None, held


def pick_profile(store_path: str | None, here: Topology | None, workload: Workload | None = None,
                 scan: int = 200) -> tuple[Profile, str]:
    """The profile to place a workload against when the user names none: the newest
    stored profile of this machine (same GPU model, count and active NVLinks; any, where
    no GPU can be probed) that holds every ceiling the workload needs, else the bundled
    reference when it qualifies. The second value says which was taken and why; a
    LinkroofError names the missing ceilings and the commands that measure them when no
    profile qualifies."""
    from ..errors import LinkroofError
    from ..roofline.model import MachineModel
    from ..roofline.summaries import machine_differences
    from ..store import Store

    def lacks(p: Profile) -> list[str]:
        if not p.measurements:
            return ["no measurements"]
        return MachineModel.from_profile(p).missing_for(workload) if workload is not None else []

    skipped: list[str] = []
    with Store(store_path) as store:
        rows = store.list(limit=scan)
        for row in rows:
            try:
                p = store.get(row["id"])
            except LinkroofError:
                continue  # a damaged profile is no candidate
            if here is not None and machine_differences(p.topology, here):
                continue
            if profile_kind(p) != "measured":  # an import or saved placements: used only when named
                continue
            missing = lacks(p)
            if not missing:
                which = "of this machine" if here is not None else "in the store (no GPU here to tell which machine)"
                why = (f" (newer ones lack: {'; '.join(skipped[:3])})" if skipped else "")
                needs = "with the ceilings this workload needs" if workload is not None else "with measurements"
                return p, f"the newest profile {which} {needs}{why}"
            skipped.append(f"{p.id}: {', '.join(missing)}")
    reference = bundled_profile()
    if (here is None or not machine_differences(reference.topology, here)) and not lacks(reference):
        return reference, ("no stored profile of this machine holds the ceilings this workload needs"
                           if skipped else "no profile of this machine in the store") + f"; using the bundled {REFERENCE} reference"
    if skipped:
        raise LinkroofError("no stored profile of this machine holds the ceilings this workload needs: "
                            + "; ".join(skipped[:5]) + ". Measure them, or choose a profile with --profile")
    raise LinkroofError("no profile of this machine in the store: measure it with `linkroof bench`, or choose a "
                        "profile with --profile (and --force to place against another machine's)")
