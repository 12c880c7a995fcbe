"""What the notebooks share: ``from solver.outputs.notebook import ROOT, money, show``.

Display helpers only (the CLI edge of a notebook); no stage of the flow imports this.
"""

from __future__ import annotations

import io
from pathlib import Path

from solver.money import whole_usd

#: The repository (problems/ and catalogs/ live here) in a source checkout.
ROOT = Path(__file__).resolve().parents[2]


def money(usd: float) -> str:
    """'$284,257'."""
    return whole_usd(usd)


def show(fig) -> None:
    """Show a matplotlib figure as a PNG (works whatever the plotting backend)."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    display(Image(buffer.getvalue()))
