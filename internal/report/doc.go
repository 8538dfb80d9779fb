// Package report renders redline's results: one lab result in full
// (findings, plans, comparisons, runs, provenance), or runs from several
// lab results and bench documents merged into one comparison by a label.
// Formats are Markdown, one self-contained HTML file with inline SVG
// charts, CSV of the runs and JSON of the tables. It reads result types
// only; it never prints or exits.
package report
