"""proton-tui: capture Triton kernels with Proton and explore where GPU time goes."""

__version__ = "0.1.0"
