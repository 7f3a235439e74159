"""What every output shares: the headline lines of a detector, the gate and slice tables, the
board's cells. Below render/html/ and render/'s own modules, so neither imports the other's."""
