package main

import "testing"

// A redelivery racing its original into one batch is stored once: the
// statement sees each event key once, the later copy is answered as a
// duplicate.
func TestARedeliveryInTheSameBatchIsStoredOnce(t *testing.T) {
	a, b := &source{id: "a"}, &source{id: "b"}
	batch := []*delivery{{src: a}, {src: b}, {src: a}, {src: a}}
	batch[0].ev.ID, batch[1].ev.ID, batch[2].ev.ID, batch[3].ev.ID = "evt_1", "evt_1", "evt_2", "evt_1"
	firsts, copies := splitCopies(batch)
	if len(firsts) != 3 || firsts[0] != batch[0] || firsts[1] != batch[1] || firsts[2] != batch[2] {
		t.Fatalf("firsts = %v, want the batch's first three deliveries", firsts)
	}
	if len(copies) != 1 || copies[0] != batch[3] {
		t.Fatalf("copies = %v, want the redelivery of evt_1 to source a", copies)
	}
}
