package txn

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The shard is driven step by step with an explicit clock: each step's
// record is "written" by applying it, as the driver does after an append.

type harness struct {
	t      *testing.T
	s      *Shard
	now    int64
	nextID int64
	// log is every record written, for replay tests.
	log []*Write
}

func newHarness(t *testing.T, tv int8) *harness {
	return &harness{t: t, s: newShard(3, 7, shardConfig{maxTimeoutMs: 60000, clusterTV: func() int8 { return tv }, idExpirationMs: 1000000}), now: 1000, nextID: 100}
}

func (h *harness) newPID() (int64, error) {
	id := h.nextID
	h.nextID++
	return id, nil
}

// apply "writes" w and applies it, returning the job it starts.
func (h *harness) apply(w *Write) *MarkerJob {
	h.t.Helper()
	if w == nil {
		h.t.Fatal("no record to write")
	}
	h.log = append(h.log, w)
	job, err := h.s.Applied(w, h.now)
	if err != nil {
		h.t.Fatalf("apply %s: %v", w.Transit.State, err)
	}
	return job
}

func (h *harness) init(id string, expected *ProducerIDAndEpoch) (int64, int16) {
	h.t.Helper()
	res := h.s.InitProducerID(id, 10000, expected, h.now, h.newPID)
	if res.Code != nil || res.Fenced {
		h.t.Fatalf("InitProducerID: %v fenced=%v", res.Code, res.Fenced)
	}
	h.apply(res.Write)
	return res.Write.Transit.ProducerID, res.Write.Transit.ProducerEpoch
}

func (h *harness) add(id string, pid int64, epoch int16, tv int8, tps ...TopicPartition) {
	h.t.Helper()
	w, code := h.s.AddPartitions(id, pid, epoch, tps, tv, h.now)
	if code != nil {
		h.t.Fatalf("AddPartitions: %v", code)
	}
	if w != nil {
		h.apply(w)
	}
}

// end ends a transaction and writes its markers, returning the job.
func (h *harness) end(id string, pid int64, epoch int16, commit bool, tv int8) *MarkerJob {
	h.t.Helper()
	res := h.s.EndTxn(id, pid, epoch, commit, tv, h.now, h.newPID)
	if res.Code != nil {
		h.t.Fatalf("EndTxn: %v", res.Code)
	}
	job := h.apply(res.Write)
	h.finish(job)
	return job
}

func (h *harness) finish(job *MarkerJob) {
	h.t.Helper()
	for _, tp := range append([]TopicPartition(nil), job.Partitions...) {
		h.s.MarkerWritten(job, tp)
	}
	w, err := h.s.MarkersDone(job)
	if err != nil {
		h.t.Fatal(err)
	}
	h.apply(w)
}

func (h *harness) state(id string) Metadata {
	m, ok := h.s.Describe(id)
	if !ok {
		h.t.Fatalf("%s unknown", id)
	}
	return m
}

var tpA, tpB = TopicPartition{"a", 0}, TopicPartition{"b", 1}

func TestInitProducerIDEpochsAndKIP360(t *testing.T) {
	h := newHarness(t, TV2)
	if res := h.s.InitProducerID("x", 0, nil, h.now, h.newPID); res.Code != kerr.InvalidTransactionTimeout {
		t.Fatalf("timeout 0: %v", res.Code)
	}
	if res := h.s.InitProducerID("x", 60001, nil, h.now, h.newPID); res.Code != kerr.InvalidTransactionTimeout {
		t.Fatalf("timeout above max: %v", res.Code)
	}
	pid, epoch := h.init("x", nil)
	if pid != 100 || epoch != 0 {
		t.Fatalf("first init = %d/%d", pid, epoch)
	}
	if pid2, epoch2 := h.init("x", nil); pid2 != pid || epoch2 != 1 {
		t.Fatalf("second init = %d/%d, want %d/1", pid2, epoch2, pid)
	}
	// KIP-360: a producer naming its current epoch gets the next one; a
	// retry naming the last epoch gets the current one back.
	if _, e := h.init("x", &ProducerIDAndEpoch{pid, 1}); e != 2 {
		t.Fatalf("bump with expected epoch 1 = %d", e)
	}
	if _, e := h.init("x", &ProducerIDAndEpoch{pid, 1}); e != 2 {
		t.Fatalf("retry with last epoch = %d, want 2 again", e)
	}
	if res := h.s.InitProducerID("x", 10000, &ProducerIDAndEpoch{pid, 0}, h.now, h.newPID); res.Code != kerr.ProducerFenced {
		t.Fatalf("stale expected epoch: %v", res.Code)
	}
	if res := h.s.InitProducerID("x", 10000, &ProducerIDAndEpoch{999, 0}, h.now, h.newPID); res.Code != kerr.ProducerFenced {
		t.Fatalf("other producer id: %v", res.Code)
	}
}

func TestExhaustedEpochRotatesProducerID(t *testing.T) {
	h := newHarness(t, TV2)
	pid, _ := h.init("x", nil)
	h.s.txns["x"].ProducerEpoch = 32766
	newPID, epoch := h.init("x", nil)
	if newPID == pid || epoch != 0 {
		t.Fatalf("exhausted epoch: got %d/%d, want a new id at epoch 0", newPID, epoch)
	}
	if m := h.state("x"); m.PrevProducerID != pid {
		t.Fatalf("previous producer id %d, want %d", m.PrevProducerID, pid)
	}
}

func TestBadInputsGetKafkaErrors(t *testing.T) {
	h := newHarness(t, TV2)
	if res := h.s.EndTxn("nobody", 1, 0, true, TV0, h.now, h.newPID); res.Code != kerr.InvalidProducerIDMapping {
		t.Fatalf("EndTxn without InitProducerId: %v", res.Code)
	}
	if _, code := h.s.AddPartitions("nobody", 1, 0, []TopicPartition{tpA}, TV0, h.now); code != kerr.InvalidProducerIDMapping {
		t.Fatalf("AddPartitions without InitProducerId: %v", code)
	}
	pid, epoch := h.init("x", nil)
	if _, code := h.s.AddPartitions("x", pid, epoch+1, []TopicPartition{tpA}, TV0, h.now); code != kerr.ProducerFenced {
		t.Fatalf("AddPartitions wrong epoch: %v", code)
	}
	if _, code := h.s.AddPartitions("x", pid+1, epoch, []TopicPartition{tpA}, TV0, h.now); code != kerr.InvalidProducerIDMapping {
		t.Fatalf("AddPartitions wrong producer id: %v", code)
	}
	if res := h.s.EndTxn("x", pid, epoch, true, TV0, h.now, h.newPID); res.Code != kerr.InvalidTxnState {
		t.Fatalf("EndTxn(commit) with nothing added: %v", res.Code)
	}
	if res := h.s.EndTxn("x", pid, epoch-1, true, TV0, h.now, h.newPID); res.Code != kerr.ProducerFenced {
		t.Fatalf("EndTxn wrong epoch: %v", res.Code)
	}
	h.add("x", pid, epoch, TV0, tpA)
	got, code := h.s.VerifyPartitions("x", pid, epoch, []TopicPartition{tpA, tpB})
	if code != nil || got[tpA] != nil || got[tpB] != kerr.TransactionAbortable {
		t.Fatalf("verify: %v %v", got, code)
	}
	if _, code := h.s.VerifyPartitions("x", pid, epoch+1, []TopicPartition{tpA}); code != kerr.ProducerFenced {
		t.Fatalf("verify wrong epoch: %v", code)
	}
}

func TestCommitV1(t *testing.T) {
	h := newHarness(t, TV2)
	pid, epoch := h.init("x", nil)
	h.add("x", pid, epoch, TV0, tpA)
	h.now += 10
	h.add("x", pid, epoch, TV0, tpB)
	m := h.state("x")
	if m.State != Ongoing || len(m.Partitions) != 2 || m.StartTimestampMs != 1000 {
		t.Fatalf("after adds: %+v", m)
	}
	// Adding what is there already writes nothing.
	if w, code := h.s.AddPartitions("x", pid, epoch, []TopicPartition{tpA}, TV0, h.now); w != nil || code != nil {
		t.Fatalf("re-add: %v %v", w, code)
	}
	res := h.s.EndTxn("x", pid, epoch, true, TV0, h.now, h.newPID)
	job := h.apply(res.Write)
	if job == nil || !job.Commit || job.ProducerEpoch != epoch || len(job.Partitions) != 2 || job.CoordinatorEpoch != 7 {
		t.Fatalf("job = %+v", job)
	}
	// While the markers are written, the transaction is busy.
	if _, code := h.s.AddPartitions("x", pid, epoch, []TopicPartition{tpA}, TV0, h.now); code != kerr.ConcurrentTransactions {
		t.Fatalf("add during markers: %v", code)
	}
	if res := h.s.EndTxn("x", pid, epoch, true, TV0, h.now, h.newPID); res.Code != kerr.ConcurrentTransactions {
		t.Fatalf("commit during markers: %v", res.Code)
	}
	h.finish(job)
	if m := h.state("x"); m.State != CompleteCommit || len(m.Partitions) != 0 || m.ProducerEpoch != epoch {
		t.Fatalf("after markers: %+v", m)
	}
	// A repeated commit succeeds without a write; an abort is refused.
	if res := h.s.EndTxn("x", pid, epoch, true, TV0, h.now, h.newPID); res.Code != nil || res.Write != nil {
		t.Fatalf("repeated commit: %+v", res)
	}
	if res := h.s.EndTxn("x", pid, epoch, false, TV0, h.now, h.newPID); res.Code != kerr.InvalidTxnState {
		t.Fatalf("abort after commit: %v", res.Code)
	}
}

func TestTransactionsV2BumpEpochPerTransaction(t *testing.T) {
	h := newHarness(t, TV2)
	pid, epoch := h.init("x", nil)
	h.add("x", pid, epoch, TV2, tpA)
	job := h.end("x", pid, epoch, true, TV2)
	if job.ProducerEpoch != epoch+1 || job.TransactionVersion != TV2 {
		t.Fatalf("v2 markers carry epoch %d tv %d, want %d and 2", job.ProducerEpoch, job.TransactionVersion, epoch+1)
	}
	if m := h.state("x"); m.ProducerEpoch != epoch+1 || m.LastProducerEpoch != epoch || m.State != CompleteCommit {
		t.Fatalf("after v2 commit: %+v", m)
	}
	// A retry at the old epoch is recognised: success, the new epoch.
	res := h.s.EndTxn("x", pid, epoch, true, TV2, h.now, h.newPID)
	if res.Code != nil || res.Write != nil || res.ProducerEpoch != epoch+1 {
		t.Fatalf("v2 retry: %+v", res)
	}
	if res := h.s.EndTxn("x", pid, epoch, false, TV2, h.now, h.newPID); res.Code != kerr.InvalidTxnState {
		t.Fatalf("v2 abort retry after commit: %v", res.Code)
	}
	// An abort at the current epoch with nothing added is written (and
	// bumps the epoch again).
	job = h.end("x", pid, epoch+1, false, TV2)
	if job.Commit || len(job.Partitions) != 0 || job.ProducerEpoch != epoch+2 {
		t.Fatalf("empty v2 abort: %+v", job)
	}
	if res := h.s.EndTxn("x", pid, epoch+2, true, TV2, h.now, h.newPID); res.Code != kerr.InvalidTxnState {
		t.Fatalf("v2 commit of nothing: %v", res.Code)
	}
	if res := h.s.EndTxn("x", pid, epoch, false, TV2, h.now, h.newPID); res.Code != kerr.ProducerFenced {
		t.Fatalf("v2 epoch two behind: %v", res.Code)
	}
}

func TestInitProducerIDFencesOngoingTransaction(t *testing.T) {
	for _, tv := range []int8{TV0, TV2} {
		h := newHarness(t, tv)
		pid, epoch := h.init("x", nil)
		h.add("x", pid, epoch, TV0, tpA)
		res := h.s.InitProducerID("x", 10000, nil, h.now, h.newPID)
		if res.Code != nil || !res.Fenced || res.Write.Transit.State != PrepareAbort {
			t.Fatalf("tv %d: init during transaction: %+v", tv, res)
		}
		job := h.apply(res.Write)
		want := epoch + 1
		if tv == TV2 {
			want = epoch + 2 // the fence, then the v2 bump of the abort
		}
		if job.Commit || job.ProducerEpoch != want {
			t.Fatalf("tv %d: fence job %+v, want abort at epoch %d", tv, job, want)
		}
		// The old producer is fenced; the retry waits for the markers.
		if _, code := h.s.AddPartitions("x", pid, epoch, []TopicPartition{tpB}, TV0, h.now); code != kerr.ProducerFenced {
			t.Fatalf("tv %d: old producer: %v", tv, code)
		}
		if res := h.s.InitProducerID("x", 10000, nil, h.now, h.newPID); res.Code != kerr.ConcurrentTransactions {
			t.Fatalf("tv %d: init while aborting: %v", tv, res.Code)
		}
		h.finish(job)
		if _, e := h.init("x", nil); e != want+1 {
			t.Fatalf("tv %d: init after abort: epoch %d, want %d", tv, e, want+1)
		}
	}
}

func TestTimedOutTransactionIsAbortedAndFailedFenceIsNotBumpedTwice(t *testing.T) {
	h := newHarness(t, TV0)
	pid, epoch := h.init("x", nil)
	h.add("x", pid, epoch, TV0, tpA)
	if ws := h.s.TimedOut(h.now+10000, h.newPID); len(ws) != 0 {
		t.Fatalf("aborted at exactly the timeout: %d", len(ws))
	}
	ws := h.s.TimedOut(h.now+10001, h.newPID)
	if len(ws) != 1 || ws[0].Transit.State != PrepareAbort || ws[0].Transit.ProducerEpoch != epoch+1 {
		t.Fatalf("timeout: %+v", ws)
	}
	// The write fails: the in-memory epoch stays bumped, and the next
	// attempt does not bump it again.
	h.s.Failed(ws[0])
	ws = h.s.TimedOut(h.now+20000, h.newPID)
	if len(ws) != 1 || ws[0].Transit.ProducerEpoch != epoch+1 {
		t.Fatalf("second attempt: %+v", ws)
	}
	h.finish(h.apply(ws[0]))
	if m := h.state("x"); m.State != CompleteAbort {
		t.Fatalf("after timeout abort: %s", m.State)
	}
}

func TestReplayRestoresStateAndResendsPreparedMarkers(t *testing.T) {
	h := newHarness(t, TV2)
	pid, epoch := h.init("x", nil)
	h.add("x", pid, epoch, TV2, tpA, tpB)
	res := h.s.EndTxn("x", pid, epoch, true, TV2, h.now, h.newPID)
	h.apply(res.Write) // PrepareCommit written; the coordinator dies here
	h.init("y", nil)

	loaded := newShard(3, 8, h.s.config)
	for _, w := range h.log {
		if err := loaded.replay(w.Key, w.Value); err != nil {
			t.Fatal(err)
		}
	}
	jobs := loaded.loaded(h.now)
	if len(jobs) != 1 || !jobs[0].Commit || jobs[0].CoordinatorEpoch != 8 || len(jobs[0].Partitions) != 2 || jobs[0].ProducerEpoch != epoch+1 {
		t.Fatalf("jobs after load: %+v", jobs)
	}
	if m, _ := loaded.Describe("y"); m.State != Empty || m.ProducerEpoch != 0 {
		t.Fatalf("y after load: %+v", m)
	}
	h.s = loaded
	h.finish(jobs[0])
	if m := h.state("x"); m.State != CompleteCommit {
		t.Fatalf("x after resent markers: %s", m.State)
	}
}

func TestExpireTransactionalIDs(t *testing.T) {
	h := newHarness(t, TV2)
	h.init("idle", nil)
	h.init("busy", nil)
	bpid, bepoch := h.s.txns["busy"].ProducerID, h.s.txns["busy"].ProducerEpoch
	h.add("busy", bpid, bepoch, TV2, tpA)
	ws := h.s.Expire(h.now + 1000000)
	if len(ws) != 1 || ws[0].TransactionalID != "idle" || ws[0].Value != nil {
		t.Fatalf("expire: %+v", ws)
	}
	h.apply(ws[0])
	if _, ok := h.s.Describe("idle"); ok {
		t.Fatal("expired id still known")
	}
}

func TestListFilters(t *testing.T) {
	h := newHarness(t, TV2)
	h.init("a", nil)
	pid, epoch := h.init("b", nil)
	h.add("b", pid, epoch, TV2, tpA)
	got := h.s.List(ListFilter{States: []State{Ongoing}, MinDurationMs: -1}, h.now)
	if len(got) != 1 || got[0].TransactionalID != "b" {
		t.Fatalf("ongoing: %+v", got)
	}
	if got := h.s.List(ListFilter{ProducerIDs: []int64{pid}, MinDurationMs: -1}, h.now); len(got) != 1 {
		t.Fatalf("by producer: %+v", got)
	}
	if got := h.s.List(ListFilter{MinDurationMs: 500}, h.now+100); len(got) != 0 {
		t.Fatalf("long-running: %+v", got)
	}
}
