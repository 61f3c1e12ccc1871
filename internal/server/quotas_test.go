package server

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func quotaEntity(pairs ...string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i < len(pairs); i += 2 {
		e := kmsg.NewAlterClientQuotasRequestEntryEntity()
		e.Type = pairs[i]
		if pairs[i+1] != "<default>" {
			name := pairs[i+1]
			e.Name = &name
		}
		out = append(out, e)
	}
	return out
}

func quotaOp(key string, value float64) kmsg.AlterClientQuotasRequestEntryOp {
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value = key, value
	return op
}

func quotaEntry(entity []kmsg.AlterClientQuotasRequestEntryEntity, ops ...kmsg.AlterClientQuotasRequestEntryOp) kmsg.AlterClientQuotasRequestEntry {
	e := kmsg.NewAlterClientQuotasRequestEntry()
	e.Entity, e.Ops = entity, ops
	return e
}

func alterQuotas(t *testing.T, cl *kgo.Client, validateOnly bool, entries ...kmsg.AlterClientQuotasRequestEntry) *kmsg.AlterClientQuotasResponse {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries, req.ValidateOnly = entries, validateOnly
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// describedQuotas renders DescribeClientQuotas entries as sorted
// "type=name,...:key=value,..." strings.
func describedQuotas(t *testing.T, adm *kadm.Client, strict bool, components ...kadm.DescribeClientQuotaComponent) []string {
	t.Helper()
	described, err := adm.DescribeClientQuotas(testContext(t), strict, components)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range described {
		var entity, values []string
		for _, c := range d.Entity {
			entity = append(entity, c.String())
		}
		for _, v := range d.Values {
			values = append(values, v.String())
		}
		sort.Strings(entity)
		sort.Strings(values)
		out = append(out, strings.Join(entity, ",")+":"+strings.Join(values, ","))
	}
	sort.Strings(out)
	return out
}

// TestClientQuotasAlterAndDescribe sets quotas with AlterClientQuotas and
// reads them back with every match type, strict and not; bad input gets
// the errors Kafka 4.4 answers (measured against a Kafka 4.4 node) and
// changes nothing.
func TestClientQuotasAlterAndDescribe(t *testing.T) {
	tn := startTestNode(t)
	cl := tn.client()
	adm := kadm.NewClient(cl)

	resp := alterQuotas(t, cl, false,
		quotaEntry(quotaEntity("user", "alice"), quotaOp("producer_byte_rate", 1024)),
		quotaEntry(quotaEntity("client-id", "<default>"), quotaOp("consumer_byte_rate", 2048)),
		quotaEntry(quotaEntity("user", "alice", "client-id", "c1"), quotaOp("request_percentage", 50)),
		quotaEntry(quotaEntity("ip", "127.0.0.1"), quotaOp("connection_creation_rate", 10)),
	)
	for _, e := range resp.Entries {
		if e.ErrorCode != 0 {
			t.Fatalf("alter %v: %v %v", e.Entity, kerr.ErrorForCode(e.ErrorCode), e.ErrorMessage)
		}
	}
	all := []string{
		"client-id=<default>:consumer_byte_rate=2048.000000",
		"client-id=c1,user=alice:request_percentage=50.000000",
		"ip=127.0.0.1:connection_creation_rate=10.000000",
		"user=alice:producer_byte_rate=1024.000000",
	}
	alice := "alice"
	cases := []struct {
		name       string
		strict     bool
		components []kadm.DescribeClientQuotaComponent
		want       []string
	}{
		{"everything", false, nil, all},
		{"nothing strict", true, nil, nil},
		{"user alice", false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: &alice, MatchType: 0}}, []string{all[1], all[3]}},
		{"user alice strict", true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: &alice, MatchType: 0}}, []string{all[3]}},
		{"default client-id", false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: 1}}, []string{all[0]}},
		{"any client-id", false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: 2}}, []string{all[0], all[1]}},
		{"any ip strict", true, []kadm.DescribeClientQuotaComponent{{Type: "ip", MatchType: 2}}, []string{all[2]}},
	}
	for _, c := range cases {
		got := describedQuotas(t, adm, c.strict, c.components...)
		if strings.Join(got, ";") != strings.Join(c.want, ";") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}

	// Bad alterations: Kafka 4.4's codes and messages, nothing applied.
	bad := []struct {
		entry kmsg.AlterClientQuotasRequestEntry
		want  string
	}{
		{quotaEntry(quotaEntity("user", "bob"), quotaOp("bogus", 1)), "Invalid configuration key bogus"},
		{quotaEntry(quotaEntity("user", "bob"), quotaOp("producer_byte_rate", -5)), "Quota producer_byte_rate must be greater than 0"},
		{quotaEntry(quotaEntity("user", "bob"), quotaOp("producer_byte_rate", 1.5)), "producer_byte_rate cannot be a fractional value."},
		{quotaEntry(quotaEntity("user", "bob"), quotaOp("producer_byte_rate", 1e300)), "Proposed value for producer_byte_rate is too large for a LONG."},
		{quotaEntry(quotaEntity("user", "bob"), quotaOp("request_percentage", math.Inf(1))), "Quota request_percentage must be a finite number"},
		{quotaEntry(quotaEntity("group", "g"), quotaOp("producer_byte_rate", 5)), "Unhandled client quota entity type: group"},
		{quotaEntry(nil, quotaOp("producer_byte_rate", 5)), "Invalid empty client quota entity"},
		{quotaEntry(quotaEntity("user", ""), quotaOp("producer_byte_rate", 5)), "Empty user not supported"},
		{quotaEntry(quotaEntity("ip", "1.2.3.4", "user", "x"), quotaOp("connection_creation_rate", 5)), "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
		{quotaEntry(quotaEntity("ip", "not an ip!"), quotaOp("connection_creation_rate", 5)), "not an ip! is not a valid IP or resolvable host."},
		{quotaEntry(quotaEntity("ip", "1.2.3.4"), quotaOp("producer_byte_rate", 5)), "Invalid configuration key producer_byte_rate"},
		{quotaEntry(quotaEntity("user", "carol"), quotaOp("producer_byte_rate", 5), quotaOp("producer_byte_rate", 6)), "Ignoring duplicate entity ClientQuotaEntity(entries={user=carol})"},
	}
	for _, b := range bad {
		resp := alterQuotas(t, cl, false, b.entry)
		if len(resp.Entries) != 1 || resp.Entries[0].ErrorCode != kerr.InvalidRequest.Code || resp.Entries[0].ErrorMessage == nil || *resp.Entries[0].ErrorMessage != b.want {
			t.Errorf("%v %v: got %+v, want INVALID_REQUEST %q", b.entry.Entity, b.entry.Ops, resp.Entries, b.want)
		}
	}
	// A duplicated entity applies nothing; the good entity beside a bad
	// one is applied.
	resp = alterQuotas(t, cl, false,
		quotaEntry(quotaEntity("user", "dave"), quotaOp("producer_byte_rate", 5)),
		quotaEntry(quotaEntity("user", "dave"), quotaOp("consumer_byte_rate", 6)),
		quotaEntry(quotaEntity("user", "gina"), quotaOp("producer_byte_rate", 7)),
		quotaEntry(quotaEntity("user", "hank"), quotaOp("bogus", 8)),
	)
	codes := map[string]int16{}
	for _, e := range resp.Entries {
		codes[*e.Entity[0].Name] = e.ErrorCode
	}
	if len(resp.Entries) != 3 || codes["dave"] != kerr.InvalidRequest.Code || codes["gina"] != 0 || codes["hank"] != kerr.InvalidRequest.Code {
		t.Fatalf("mixed request: %+v", resp.Entries)
	}
	// validate_only checks and writes nothing.
	resp = alterQuotas(t, cl, true, quotaEntry(quotaEntity("user", "ivan"), quotaOp("producer_byte_rate", 9)))
	if resp.Entries[0].ErrorCode != 0 {
		t.Fatalf("validate only: %+v", resp.Entries)
	}
	want := append([]string{}, all...)
	want = append(want, "user=gina:producer_byte_rate=7.000000")
	sort.Strings(want)
	if got := describedQuotas(t, adm, false); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("after bad input: %v\nwant %v", got, want)
	}

	// Removal, and bad filters.
	remove := quotaOp("producer_byte_rate", 0)
	remove.Remove = true
	alterQuotas(t, cl, false, quotaEntry(quotaEntity("user", "gina"), remove))
	if got := describedQuotas(t, adm, false); strings.Join(got, ";") != strings.Join(all, ";") {
		t.Fatalf("after removal: %v", got)
	}
	badFilters := []struct {
		components []kmsg.DescribeClientQuotasRequestComponent
		code       int16
		message    string
	}{
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "group", MatchType: 2}}, kerr.UnsupportedVersion.Code, "Unsupported entity type group"},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 7}}, kerr.InvalidRequest.Code, "Unknown match type 7"},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0}}, kerr.InvalidRequest.Code, "Request specified MATCH_TYPE_EXACT, but set match string to null."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 1, Match: &alice}}, kerr.InvalidRequest.Code, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 2}, {EntityType: "user", MatchType: 0, Match: &alice}}, kerr.InvalidRequest.Code, "Entity type user cannot appear more than once in the filter."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "ip", MatchType: 2}, {EntityType: "user", MatchType: 2}}, kerr.InvalidRequest.Code, "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."},
		{[]kmsg.DescribeClientQuotasRequestComponent{{EntityType: "", MatchType: 2}}, kerr.InvalidRequest.Code, "Invalid empty entity type."},
	}
	for _, f := range badFilters {
		req := kmsg.NewPtrDescribeClientQuotasRequest()
		req.Components = f.components
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != f.code || resp.ErrorMessage == nil || *resp.ErrorMessage != f.message || len(resp.Entries) != 0 {
			t.Errorf("filter %+v: %d %v, want %d %q", f.components, resp.ErrorCode, resp.ErrorMessage, f.code, f.message)
		}
	}
	// The quotas survive a restart (replayed from the metadata log).
	tn.restart()
	if got := describedQuotas(t, tn.admin(), false); strings.Join(got, ";") != strings.Join(all, ";") {
		t.Fatalf("after restart: %v", got)
	}
}

// setQuota sets one quota with kadm and fails the test on any error.
func setQuota(t *testing.T, adm *kadm.Client, entity kadm.ClientQuotaEntity, key string, value float64) {
	t.Helper()
	altered, err := adm.AlterClientQuotas(context.Background(), []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: []kadm.AlterClientQuotaOp{{Key: key, Value: value}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range altered {
		if a.Err != nil {
			t.Fatalf("alter %v: %v %s", a.Entity, a.Err, a.ErrMessage)
		}
	}
}
