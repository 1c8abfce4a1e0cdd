"""Examples of the ``wisp`` package: :mod:`wisp.examples.aimd` (a controller written in Python,
with a Rust twin) and :mod:`wisp.examples.policy` (a policy for :class:`wisp.gym.RateControlEnv`)."""
