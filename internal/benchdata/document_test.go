package benchdata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDocumentRoundTripKeepsHistogram(t *testing.T) {
	h := NewHistogram(3)
	for v := int64(1000); v < 2_000_000; v += 997 {
		h.RecordValue(v)
	}
	s := &Summary{Schema: SchemaVersion, Title: "SET", Requests: h.TotalCount(), Histogram: h, Latency: Digest(h.Histogram), Start: time.Unix(0, 0).UTC()}
	path := filepath.Join(t.TempDir(), "d.json")
	if err := WriteDocument(path, Document{Schema: DocumentSchema, Results: []*Summary{s}}); err != nil {
		t.Fatal(err)
	}
	doc, err := ReadDocument(path)
	if err != nil {
		t.Fatal(err)
	}
	got := doc.Results[0].Histogram
	if got.TotalCount() != h.TotalCount() || got.ValueAtPercentile(99) != h.ValueAtPercentile(99) {
		t.Errorf("histogram changed in the round trip")
	}
	merged := NewHistogram(3)
	merged.Merge(got.Histogram)
	merged.Merge(h.Histogram)
	if merged.TotalCount() != 2*s.Requests {
		t.Errorf("merged count %d, want %d", merged.TotalCount(), 2*s.Requests)
	}
}

func TestReadDocumentRejectsOtherSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.json")
	if err := os.WriteFile(path, []byte(`{"schema":"other/v9","results":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDocument(path); err == nil || !strings.Contains(err.Error(), DocumentSchema) {
		t.Errorf("err = %v, want a schema mismatch naming %s", err, DocumentSchema)
	}
}

func TestDigestOfEmptyHistogramIsZero(t *testing.T) {
	if d := Digest(nil); d != (Latency{}) {
		t.Errorf("Digest(nil) = %+v", d)
	}
	if d := Digest(NewHistogram(3).Histogram); d != (Latency{}) {
		t.Errorf("Digest(empty) = %+v", d)
	}
}
