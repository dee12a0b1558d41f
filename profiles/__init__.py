"""Policy profiles: TOML file -> model -> lint.

Never imports `classifier`, `compiler` or `ringfence`.
"""

from .model import (CommandRule, Env, Filesystem, Limits, Located, Network, Profile,
                    Tooling)

__all__ = ["CommandRule", "Env", "Filesystem", "Limits", "Located", "Network", "Profile",
           "Tooling"]
