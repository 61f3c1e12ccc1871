package quota

import (
	"math"
	"testing"
)

func tableOf(values map[Entity]map[string]float64) *Table { return NewTable(values) }

func TestRateSpanAssumesFullWindowsWhenYoung(t *testing.T) {
	w := DefaultWindows
	var r Rate
	r.Record(w, 1000, 0)
	// One sample at 0: the span is taken as 10 whole windows.
	if got := r.SpanMs(w, 0); got != 10000 {
		t.Fatalf("span at 0 = %d, want 10000", got)
	}
	if got := r.PerSecond(w, 0); got != 100 {
		t.Fatalf("rate = %v, want 100", got)
	}
	// 15 s later every window has expired: nothing is left.
	if got := r.PerSecond(w, 15000); got != 0 {
		t.Fatalf("rate after expiry = %v, want 0", got)
	}
}

func TestRateOverFullSpan(t *testing.T) {
	w := DefaultWindows
	var r Rate
	// 100 bytes every 100 ms for 30 s: 1000 B/s steady.
	for now := int64(0); now < 30000; now += 100 {
		r.Record(w, 100, now)
	}
	got := r.PerSecond(w, 29900)
	if math.Abs(got-1000) > 1000*0.02 {
		t.Fatalf("steady rate = %v, want about 1000", got)
	}
	if n := len(r.samples); n > w.Samples {
		t.Fatalf("%d samples kept, at most %d", n, w.Samples)
	}
}

func TestThrottleTimeFormula(t *testing.T) {
	m := NewManager(Config{Windows: DefaultWindows})
	m.SetTable(tableOf(map[Entity]map[string]float64{
		{ClientID: NamedPart("c")}: {ProducerByteRate: 1000},
	}))
	// 20000 bytes at once over an assumed 10 s span: 2000 B/s, twice the
	// quota; (2000-1000)/1000 * 10000 ms.
	if got := m.Record(Produce, "ANONYMOUS", "c", 20000, 0); got != 10000 {
		t.Fatalf("throttle = %d, want 10000", got)
	}
	// Within quota: no throttle.
	if got := m.Record(Produce, "ANONYMOUS", "other", 20000, 0); got != 0 {
		t.Fatalf("client without a quota throttled %d", got)
	}
}

// A client that honours every throttle achieves its quota: the formula
// holds the average at the bound.
func TestHonouringClientAchievesQuota(t *testing.T) {
	const bound = 10 << 20
	m := NewManager(Config{Windows: DefaultWindows})
	m.SetTable(tableOf(map[Entity]map[string]float64{
		{User: NamedPart("alice")}: {ProducerByteRate: bound},
	}))
	const requestBytes = 1 << 20
	var now, sent int64
	const startMs, endMs = 20000, 80000
	var sentInWindow int64
	for now < endMs {
		throttle := m.Record(Produce, "alice", "any", requestBytes, now)
		sent += requestBytes
		if now >= startMs {
			sentInWindow += requestBytes
		}
		// A request takes 5 ms; a throttled client waits its throttle.
		now += 5 + throttle
	}
	achieved := float64(sentInWindow) / float64(endMs-startMs) * 1000
	if math.Abs(achieved-bound)/bound > 0.10 {
		t.Fatalf("achieved %.0f B/s, want %d ± 10%%", achieved, bound)
	}
}

func TestResolutionOrder(t *testing.T) {
	levels := []Entity{
		{User: NamedPart("alice"), ClientID: NamedPart("app")},
		{User: NamedPart("alice"), ClientID: DefaultPart},
		{User: NamedPart("alice")},
		{User: DefaultPart, ClientID: NamedPart("app")},
		{User: DefaultPart, ClientID: DefaultPart},
		{User: DefaultPart},
		{ClientID: NamedPart("app")},
		{ClientID: DefaultPart},
	}
	buckets := []Bucket{
		{"alice", "app"}, {"alice", "app"}, {"alice", ""},
		{"alice", "app"}, {"alice", "app"}, {"alice", ""},
		{"", "app"}, {"", "app"},
	}
	for first := range levels {
		values := map[Entity]map[string]float64{}
		for i := first; i < len(levels); i++ {
			values[levels[i]] = map[string]float64{ProducerByteRate: float64(100 + i)}
		}
		// An unrelated key at a more specific level must not shadow.
		values[Entity{User: NamedPart("alice"), ClientID: NamedPart("app")}] = map[string]float64{ConsumerByteRate: 1}
		if first == 0 {
			values[levels[0]][ProducerByteRate] = 100
		}
		bound, bucket, ok := tableOf(values).Resolve(ProducerByteRate, "alice", "app")
		if !ok || bound != float64(100+first) || bucket != buckets[first] {
			t.Fatalf("from level %d: bound %v bucket %+v ok %v, want %d %+v", first, bound, bucket, ok, 100+first, buckets[first])
		}
	}
	if _, _, ok := tableOf(nil).Resolve(ProducerByteRate, "alice", "app"); ok {
		t.Fatal("empty table resolved a quota")
	}
}

func TestDefaultClientIDQuotaIsPerClient(t *testing.T) {
	m := NewManager(Config{Windows: DefaultWindows})
	m.SetTable(tableOf(map[Entity]map[string]float64{{ClientID: DefaultPart}: {ProducerByteRate: 1000}}))
	// Each client id has its own 1000 B/s: 10000 bytes each fits (1000 B/s
	// over 10 s); the same bytes from one client would not.
	for _, c := range []string{"a", "b", "c"} {
		if got := m.Record(Produce, "ANONYMOUS", c, 10000, 0); got != 0 {
			t.Fatalf("client %s throttled %d", c, got)
		}
	}
	if got := m.Record(Produce, "ANONYMOUS", "a", 10000, 0); got == 0 {
		t.Fatal("client a over its own quota not throttled")
	}
}

func TestUserQuotaSharedAcrossClientIDs(t *testing.T) {
	m := NewManager(Config{Windows: DefaultWindows})
	m.SetTable(tableOf(map[Entity]map[string]float64{{User: NamedPart("bob")}: {ConsumerByteRate: 1000}}))
	if got := m.Record(Fetch, "bob", "a", 10000, 0); got != 0 {
		t.Fatalf("first client throttled %d", got)
	}
	if got := m.Record(Fetch, "bob", "b", 10000, 0); got != 10000 {
		t.Fatalf("second client of the same user: throttle %d, want 10000", got)
	}
}

func TestUnrecordAndMaxValueInWindow(t *testing.T) {
	m := NewManager(Config{Windows: DefaultWindows})
	m.SetTable(tableOf(map[Entity]map[string]float64{{ClientID: NamedPart("c")}: {ConsumerByteRate: 1000}}))
	if got := m.MaxValueInWindow(Fetch, "u", "c"); got != 10000 {
		t.Fatalf("max value in window = %v, want 10000", got)
	}
	if got := m.MaxValueInWindow(Fetch, "u", "nobody"); !math.IsInf(got, 1) {
		t.Fatalf("max value without quota = %v", got)
	}
	if got := m.Record(Fetch, "u", "c", 30000, 0); got == 0 {
		t.Fatal("not throttled")
	}
	m.Unrecord(Fetch, "u", "c", 30000, 0)
	if got := m.Record(Fetch, "u", "c", 5000, 1); got != 0 {
		t.Fatalf("throttled %d after unrecord", got)
	}
}

func TestRequestThrottleBoundedByWindow(t *testing.T) {
	m := NewManager(Config{Windows: DefaultWindows})
	m.SetTable(tableOf(map[Entity]map[string]float64{{ClientID: NamedPart("c")}: {RequestPercentage: 1}}))
	// 5 handler-seconds at once = 500 percent-seconds.
	if got := m.Record(Request, "u", "c", 500, 0); got != 1000 {
		t.Fatalf("request throttle = %d, want the 1000 ms bound", got)
	}
}

func TestControllerMutationTokenBucket(t *testing.T) {
	m := NewManager(Config{Windows: DefaultWindows, ControllerWindows: DefaultWindows})
	m.SetTable(tableOf(map[Entity]map[string]float64{{User: DefaultPart}: {ControllerMutationRate: 10}}))
	// Burst: 10/s * 11 windows of 1 s = 110 tokens.
	if ok, th := m.RecordMutations("u", "c", 100, true, 0); !ok || th != 0 {
		t.Fatalf("first: %v %d", ok, th)
	}
	// 10 tokens left: accepted, goes to -10.
	if ok, th := m.RecordMutations("u", "c", 20, true, 0); !ok || th != 0 {
		t.Fatalf("second: %v %d", ok, th)
	}
	// Empty: refused, 10 tokens at 10/s is 1000 ms away.
	if ok, th := m.RecordMutations("u", "c", 1, true, 0); ok || th != 1000 {
		t.Fatalf("third: %v %d, want refused 1000", ok, th)
	}
	if ok, _ := m.RecordMutations("u", "c", 1, true, 1000); !ok {
		t.Fatal("refused once refilled to zero")
	}
	// Permissive: always taken, throttled by the deficit.
	if ok, th := m.RecordMutations("v", "c", 130, false, 0); !ok || th != 2000 {
		t.Fatalf("permissive: %v %d, want accepted 2000", ok, th)
	}
}

func TestManagerWithoutQuotasRecordsNothing(t *testing.T) {
	m := NewManager(Config{})
	for i := 0; i < 100; i++ {
		if got := m.Record(Produce, "u", "c", 1e12, int64(i)); got != 0 {
			t.Fatalf("throttled %d without quotas", got)
		}
	}
	if stats := m.Stats(0, 10); len(stats) != 0 {
		t.Fatalf("stats without quotas: %v", stats)
	}
}

func TestBucketsExpireAfterAnHour(t *testing.T) {
	m := NewManager(Config{})
	m.SetTable(tableOf(map[Entity]map[string]float64{{ClientID: DefaultPart}: {ProducerByteRate: 1000}}))
	for i := 0; i < 50; i++ {
		m.Record(Produce, "u", string(rune('a'+i)), 1, 0)
	}
	m.Record(Produce, "u", "late", 1, inactiveBucketExpiryMs+expirySweepIntervalMs)
	if got := len(m.Stats(inactiveBucketExpiryMs+expirySweepIntervalMs, 1000)); got != 1 {
		t.Fatalf("%d buckets after an hour, want 1", got)
	}
}

func TestStatsBounded(t *testing.T) {
	m := NewManager(Config{})
	m.SetTable(tableOf(map[Entity]map[string]float64{{ClientID: DefaultPart}: {ProducerByteRate: 1000}}))
	for i := 0; i < 500; i++ {
		m.Record(Produce, "u", string(rune(0x100+i)), float64(i), 0)
	}
	stats := m.Stats(0, 20)
	if len(stats) != 20 || stats[0].Rate < stats[19].Rate {
		t.Fatalf("stats: %d, first %v last %v", len(stats), stats[0].Rate, stats[len(stats)-1].Rate)
	}
}

func TestConnectionRateIP(t *testing.T) {
	c := NewConnectionRates(DefaultWindows)
	c.SetTable(tableOf(map[Entity]map[string]float64{{IP: NamedPart("10.0.0.1")}: {ConnectionCreationRate: 2}}))
	// 2/s over an assumed 10 s span: 20 connections fit at once.
	for i := 0; i < 20; i++ {
		if th := c.AdmitIP("10.0.0.1", 0); th != 0 {
			t.Fatalf("connection %d throttled %d", i, th)
		}
	}
	if th := c.AdmitIP("10.0.0.1", 0); th == 0 {
		t.Fatal("21st connection not throttled")
	}
	// The refused one was not counted: still exactly at the limit.
	if th := c.AdmitIP("10.0.0.1", 0); th == 0 {
		t.Fatal("22nd connection not throttled")
	}
	if th := c.AdmitIP("10.0.0.2", 0); th != 0 {
		t.Fatal("other IP throttled")
	}
	if wait := c.AdmitListener("PLAINTEXT", math.MaxInt32, 0); wait != 0 {
		t.Fatal("unlimited listener waits")
	}
}

func TestEntityChecks(t *testing.T) {
	s := func(v string) *string { return &v }
	cases := []struct {
		components []Component
		want       string
	}{
		{nil, "Invalid empty client quota entity"},
		{[]Component{{Type: "group", Name: s("g")}}, "Unhandled client quota entity type: group"},
		{[]Component{{Type: TypeUser, Name: s("")}}, "Empty user not supported"},
		{[]Component{{Type: TypeIP, Name: s("1.2.3.4")}, {Type: TypeUser, Name: s("x")}}, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
		{[]Component{{Type: TypeIP, Name: s("not an ip!")}}, "not an ip! is not a valid IP or resolvable host."},
		{[]Component{{Type: TypeUser, Name: s("a")}, {Type: TypeUser, Name: s("b")}}, ""},
	}
	for _, c := range cases {
		_, err := EntityFromComponents(c.components)
		got := ""
		if err != nil {
			got = err.Message
		}
		if got != c.want {
			t.Errorf("%v: %q, want %q", c.components, got, c.want)
		}
	}
	e, _ := EntityFromComponents([]Component{{Type: TypeUser, Name: s("a")}, {Type: TypeUser, Name: s("b")}})
	if e.User != NamedPart("b") {
		t.Errorf("a type named twice keeps %v, want the last", e.User)
	}
	user := Entity{User: NamedPart("bob")}
	values := []struct {
		entity Entity
		key    string
		value  float64
		want   string
	}{
		{user, "bogus", 1, "Invalid configuration key bogus"},
		{user, ProducerByteRate, -5, "Quota producer_byte_rate must be greater than 0"},
		{user, ProducerByteRate, 0, "Quota producer_byte_rate must be greater than 0"},
		{user, ProducerByteRate, 1.5, "producer_byte_rate cannot be a fractional value."},
		{user, ProducerByteRate, 1e300, "Proposed value for producer_byte_rate is too large for a LONG."},
		{user, RequestPercentage, 1e300, ""},
		{user, RequestPercentage, math.NaN(), "Quota request_percentage must be a finite number"},
		{user, ConnectionCreationRate, 5, "Invalid configuration key connection_creation_rate"},
		{Entity{IP: NamedPart("1.2.3.4")}, ProducerByteRate, 5, "Invalid configuration key producer_byte_rate"},
		{Entity{IP: DefaultPart}, ConnectionCreationRate, 5, ""},
	}
	for _, v := range values {
		got := ""
		if err := CheckValue(v.entity, v.key, v.value); err != nil {
			got = err.Message
		}
		if got != v.want {
			t.Errorf("%v %s=%v: %q, want %q", v.entity, v.key, v.value, got, v.want)
		}
	}
	if got := (Entity{User: NamedPart("carol"), ClientID: DefaultPart}).String(); got != "ClientQuotaEntity(entries={client-id=null, user=carol})" {
		t.Errorf("String = %q", got)
	}
	if UserOfPrincipal("User:ANONYMOUS") != "ANONYMOUS" || UserOfPrincipal("User:alice") != "alice" {
		t.Error("UserOfPrincipal")
	}
}

func BenchmarkRecordProduceWithQuota(b *testing.B) {
	m := NewManager(Config{})
	m.SetTable(tableOf(map[Entity]map[string]float64{
		{User: NamedPart("alice")}:  {ProducerByteRate: 1 << 40},
		{ClientID: DefaultPart}:     {ProducerByteRate: 1 << 40},
		{User: DefaultPart}:         {ConsumerByteRate: 1 << 40},
		{IP: NamedPart("10.0.0.1")}: {ConnectionCreationRate: 10},
	}))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Record(Produce, "bob", "app", 1000, int64(i/1000))
	}
}

func BenchmarkRecordProduceWithoutQuota(b *testing.B) {
	m := NewManager(Config{})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Record(Produce, "bob", "app", 1000, int64(i/1000))
	}
}
