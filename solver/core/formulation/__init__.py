"""The constraint families of the MIP, one module per group of them (demand and capacity,
fleets over the day, redundancy and failure domains, pools and commitments, limits, the
objective), on the shared build state of :mod:`solver.core.formulation.state`;
:func:`solver.core.model.build_model` adds them in order."""
