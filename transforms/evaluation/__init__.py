"""Measured quality of kgmem's extraction stages on public benchmarks (Re-DocRED layout)."""
