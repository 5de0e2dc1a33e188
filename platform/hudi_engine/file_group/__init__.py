"""File groups and slices: data file names and the view of a table at an instant."""
