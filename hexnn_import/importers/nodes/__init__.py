"""Node builders shared by the importers: each appends hexagon_nn nodes for one lowering, for every source format."""
