package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// groupCommitted returns the committed offset of a group's partition as
// "groups describe -o json" reports it.
func groupCommitted(t *testing.T, bootstrap, group, topic string, partition int32) int64 {
	t.Helper()
	var described []describedGroup
	decodeJSON(t, mustRun(t, bootstrap, "", "groups", "describe", group, "-o", "json").stdout, &described)
	for _, p := range described[0].Partitions {
		if p.Topic == topic && p.Partition == partition {
			return p.CommittedOffset
		}
	}
	t.Fatalf("group %s has no %s-%d partition: %+v", group, topic, partition, described)
	return 0
}

func TestGroupsListDescribeDelete(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "tasks", 1)
	mustRun(t, bootstrap, "a\nb\nc\nd\ne\n", "produce", "tasks")
	mustRun(t, bootstrap, "", "consume", "tasks", "--group", "crew", "--from-beginning", "--max-messages", "3")

	out := mustRun(t, bootstrap, "", "groups", "list").stdout
	if rows := tableRows(out, "crew"); len(rows) != 1 || rows[0][1] != "Empty" {
		t.Errorf("groups list rows for crew: %v\n%s", rows, out)
	}
	var listed []listedGroup
	decodeJSON(t, mustRun(t, bootstrap, "", "groups", "list", "-o", "json").stdout, &listed)
	if len(listed) != 1 || listed[0].Group != "crew" || listed[0].ProtocolType != "consumer" {
		t.Errorf("groups list -o json: %+v", listed)
	}

	out = mustRun(t, bootstrap, "", "groups", "describe", "crew").stdout
	for _, want := range []string{"Group:        crew", "State:        Empty", "Total lag:    2", "COMMITTED-OFFSET", "LOG-END-OFFSET"} {
		if !strings.Contains(out, want) {
			t.Errorf("groups describe lacks %q:\n%s", want, out)
		}
	}
	if rows := tableRows(out, "tasks"); len(rows) != 1 || strings.Join(rows[0][:5], " ") != "tasks 0 3 5 2" {
		t.Errorf("groups describe partition rows: %v\n%s", rows, out)
	}

	// A live member shows up with its assignment, and blocks deletion.
	ctx, cancel := context.WithCancel(context.Background())
	member, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ClientID("test-member"),
		kgo.ConsumerGroup("crew"), kgo.ConsumeTopics("tasks"), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ctx.Err() == nil {
			member.PollFetches(ctx)
		}
	}()
	var described []describedGroup
	eventually(t, "the member to join crew", func() bool {
		decodeJSON(t, mustRun(t, bootstrap, "", "groups", "describe", "crew", "-o", "json").stdout, &described)
		return described[0].State == "Stable" && len(described[0].Members) == 1 && len(described[0].Members[0].Assignment) == 1
	})
	if m := described[0].Members[0]; m.ClientID != "test-member" || m.Assignment[0].Topic != "tasks" || joinInt32s(m.Assignment[0].Partitions) != "0" {
		t.Errorf("member: %+v", m)
	}
	if described[0].TotalLag != 2 || described[0].Partitions[0].MemberID != described[0].Members[0].MemberID {
		t.Errorf("describe with a member: %+v", described[0])
	}
	out = mustRun(t, bootstrap, "", "groups", "describe", "crew").stdout
	if !strings.Contains(out, "MEMBER-ID") || !strings.Contains(out, "tasks:0") {
		t.Errorf("groups describe table lacks the member:\n%s", out)
	}
	mustFail(t, bootstrap, "", []string{"groups", "delete", "crew"}, `"crew"`, "NON_EMPTY_GROUP", "stop the group's consumers")
	mustFail(t, bootstrap, "", []string{"groups", "reset-offsets", "crew", "--topic", "tasks", "--to-earliest"},
		"group is Stable", "stop the group's consumers")
	cancel()
	member.Close()

	eventually(t, "crew to become Empty", func() bool {
		decodeJSON(t, mustRun(t, bootstrap, "", "groups", "describe", "crew", "-o", "json").stdout, &described)
		return described[0].State == "Empty"
	})
	out = mustRun(t, bootstrap, "", "groups", "delete", "crew").stdout
	if !strings.Contains(out, `Deleted group "crew".`) {
		t.Errorf("groups delete output: %q", out)
	}
	mustFail(t, bootstrap, "", []string{"groups", "describe", "crew"}, `"crew"`, "GROUP_ID_NOT_FOUND", "samsa groups list")
	mustFail(t, bootstrap, "", []string{"groups", "delete", "crew"}, `"crew"`, "GROUP_ID_NOT_FOUND")
	mustFail(t, bootstrap, "", []string{"groups", "describe"}, "missing GROUP argument")
}

func TestGroupsResetOffsets(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "ledger", 2)
	mustRun(t, bootstrap, "a\nb\nc\nd\n", "produce", "ledger", "--partition", "0")
	mustRun(t, bootstrap, "e\nf\n", "produce", "ledger", "--partition", "1")
	mustRun(t, bootstrap, "", "consume", "ledger", "--group", "audit", "--from-beginning", "--max-messages", "6")
	if got := groupCommitted(t, bootstrap, "audit", "ledger", 0); got != 4 {
		t.Fatalf("committed offset after consuming = %d, want 4", got)
	}

	// The default is a dry run: the plan is printed, nothing committed.
	result := mustRun(t, bootstrap, "", "groups", "reset-offsets", "audit", "--topic", "ledger", "--to-earliest")
	if rows := tableRows(result.stdout, "audit"); len(rows) != 2 || strings.Join(rows[0], " ") != "audit ledger 0 4 0" ||
		strings.Join(rows[1], " ") != "audit ledger 1 2 0" {
		t.Errorf("dry-run plan rows %v\n%s", rows, result.stdout)
	}
	if !strings.Contains(result.stderr, "Dry run") {
		t.Errorf("dry run note missing from stderr: %q", result.stderr)
	}
	if got := groupCommitted(t, bootstrap, "audit", "ledger", 0); got != 4 {
		t.Errorf("dry run committed: offset %d, want 4", got)
	}

	for _, tc := range []struct {
		args []string
		want int64 // partition 0's new offset
	}{
		{[]string{"--to-earliest"}, 0},
		{[]string{"--shift-by", "3"}, 3},
		{[]string{"--shift-by", "-10"}, 0}, // clamped to the log start
		{[]string{"--to-offset", "2"}, 2},
		{[]string{"--to-offset", "100"}, 4}, // clamped to the log end
		{[]string{"--to-datetime", "2000-01-01T00:00:00Z"}, 0},
		{[]string{"--to-datetime", time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, 4},
		{[]string{"--to-earliest"}, 0},
		{[]string{"--to-latest"}, 4},
	} {
		args := append([]string{"groups", "reset-offsets", "audit", "--topic", "ledger:0", "--execute"}, tc.args...)
		out := mustRun(t, bootstrap, "", args...).stdout
		if !strings.Contains(out, `Committed new offsets for 1 partition of group "audit".`) {
			t.Errorf("%v: output %q", tc.args, out)
		}
		if got := groupCommitted(t, bootstrap, "audit", "ledger", 0); got != tc.want {
			t.Errorf("%v: committed offset %d, want %d", tc.args, got, tc.want)
		}
	}
	// --topic ledger:0 left partition 1 alone.
	if got := groupCommitted(t, bootstrap, "audit", "ledger", 1); got != 2 {
		t.Errorf("partition 1 committed offset %d, want 2", got)
	}

	var plan resetPlan
	decodeJSON(t, mustRun(t, bootstrap, "", "groups", "reset-offsets", "audit", "--all-topics", "--to-earliest", "--execute", "-o", "json").stdout, &plan)
	if !plan.Executed || len(plan.Partitions) != 2 || plan.Partitions[1] != (offsetReset{Topic: "ledger", Partition: 1, CurrentOffset: 2, NewOffset: 0}) {
		t.Errorf("reset -o json plan: %+v", plan)
	}

	// A group that does not exist yet gets its first commit.
	mustRun(t, bootstrap, "", "groups", "reset-offsets", "fresh", "--topic", "ledger", "--to-latest", "--execute")
	if got := groupCommitted(t, bootstrap, "fresh", "ledger", 1); got != 2 {
		t.Errorf("new group committed %d, want 2", got)
	}
	mustFail(t, bootstrap, "", []string{"groups", "reset-offsets", "newer", "--topic", "ledger", "--shift-by", "1"}, "no committed offset to shift")

	mustFail(t, bootstrap, "", []string{"groups", "reset-offsets", "audit", "--topic", "missing", "--to-earliest"},
		`"missing"`, "UNKNOWN_TOPIC_OR_PARTITION")
	mustFail(t, bootstrap, "", []string{"groups", "reset-offsets", "audit", "--topic", "ledger:7", "--to-earliest"}, "no partition 7")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "ledger"}, "give one of --to-earliest"},
		{[]string{"--topic", "ledger", "--to-earliest", "--to-latest"}, "give only one of"},
		{[]string{"--to-earliest"}, "give --topic (repeatable) or --all-topics"},
		{[]string{"--topic", "ledger", "--all-topics", "--to-earliest"}, "give --topic (repeatable) or --all-topics"},
		{[]string{"--topic", "ledger", "--to-earliest", "--dry-run", "--execute"}, "cannot be combined"},
		{[]string{"--topic", "ledger", "--to-datetime", "yesterday"}, `invalid --to-datetime "yesterday"`},
		{[]string{"--topic", "ledger:x", "--to-earliest"}, "is not a partition number"},
		{[]string{"--topic", "ledger", "--to-offset", "-1"}, "--to-offset must be 0 or more"},
	} {
		mustFail(t, bootstrap, "", append([]string{"groups", "reset-offsets", "audit"}, tc.args...), tc.want, "--help")
	}
}
