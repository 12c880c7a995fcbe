"""What comes in: catalog, problem, presets, load curve, prices, YAML reading, the
column declarations of the tables; ``importers/`` has one module per outside price format."""
