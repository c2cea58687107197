# %% [markdown]
# # linkroof in a notebook
# Load the bundled profile (a full suite measured on a real 2×H200 machine), look at it
# as a DataFrame, and draw two figures: copy bandwidth by message size per mechanism,
# and NCCL bus bandwidth by size per collective. Any stored profile works the same:
# `linkroof.load("<id>")`, or a file: `linkroof.load("profile.json")`.

# %%
import linkroof

profile = linkroof.load("reference")
df = profile.to_dataframe()
print(f"{profile.id}: {len(df)} measurements, {df['verified'].mean():.0%} verified")
df[["name", "mechanism", "pattern", "devices", "message_bytes", "figure", "figure_unit"]].head()

# %%
sweeps = df[(df["param.sweep"] == True) & (df["pattern"] == "p2p_write")]  # noqa: E712
table = sweeps.pivot_table(index="message_bytes", columns="mechanism", values="bandwidth_bytes_per_s") / 1e9
table.tail()

# %%
import plotly.express as px

fig_sweep = px.line(sweeps.sort_values("message_bytes"), x="message_bytes", y="bandwidth_bytes_per_s",
                    color="mechanism", log_x=True, markers=True,
                    labels={"message_bytes": "message size (bytes)", "bandwidth_bytes_per_s": "bytes/s"},
                    title="Peer writes GPU0 -> GPU1 by mechanism")
fig_sweep

# %%
# one timing per curve: the GPU's own time per call (the profile also holds each figure timed
# with the host's launch, param.timing == "host_launch"; mixing the two zig-zags)
nccl = df[(df["mechanism"] == "nccl") & (df["param.in_place"] == False) & (df["param.dtype"] == "fp32")  # noqa: E712
          & (df["param.timing"] == "device")]
fig_nccl = px.line(nccl.sort_values("message_bytes"), x="message_bytes", y="busbw_bytes_per_s", color="pattern",
                   log_x=True, markers=True, title="NCCL bus bandwidth by size (fp32, out of place, device time)")
fig_nccl
