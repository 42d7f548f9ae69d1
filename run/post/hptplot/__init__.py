"""The plots of run/post/hpt-plot, one module per hpt output kind."""
