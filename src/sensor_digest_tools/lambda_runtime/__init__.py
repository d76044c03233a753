"""Lambda's side of the local runtime: its event shapes, its two pollers (event sources), and the invoke adapter."""
