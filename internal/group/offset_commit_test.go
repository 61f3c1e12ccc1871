package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitGroupKind is the group a validation case commits to.
type commitGroupKind int

const (
	noGroup commitGroupKind = iota
	classicEmpty
	classicPreparing
	classicCompleting
	classicStable
	classicDead
	consumerEmpty
	consumerActive
)

// commitValidationShard builds a shard holding group "g" of kind. The
// classic groups are at generation 5 with dynamic member "m1" and static
// member "m2" (instance "i2"), the consumer group has member "c1" at epoch 7.
func commitValidationShard(kind commitGroupKind) *shard {
	s := newShard(0, Config{})
	switch kind {
	case noGroup:
	case consumerEmpty:
		s.groups["g"] = newConsumerGroup("g")
	case consumerActive:
		g := newConsumerGroup("g")
		m := newConsumerMember("c1")
		m.memberEpoch = 7
		g.members["c1"] = m
		s.groups["g"] = g
	default:
		st := map[commitGroupKind]state{classicEmpty: stateEmpty, classicPreparing: statePreparingRebalance,
			classicCompleting: stateCompletingRebalance, classicStable: stateStable, classicDead: stateDead}[kind]
		g := newClassicGroup("g", st, 0)
		g.generation = 5
		if st != stateEmpty && st != stateDead {
			g.members = map[string]*member{"m1": {id: "m1"}, "m2": {id: "m2", instanceID: strptrTest("i2")}}
			g.memberOrder = []string{"m1", "m2"}
			g.staticMembers = map[string]string{"i2": "m2"}
		}
		s.groups["g"] = g
	}
	return s
}

func strptrTest(s string) *string { return &s }

// TestOffsetCommitValidation is the coordinator's decision on who may
// commit, for OffsetCommit and TxnOffsetCommit, after Kafka's
// ClassicGroup/ConsumerGroup.validateOffsetCommit and
// OffsetMetadataManager's validateOffsetCommit and
// validateTransactionalOffsetCommit.
func TestOffsetCommitValidation(t *testing.T) {
	const ok = int16(0)
	i2, other := strptrTest("i2"), strptrTest("i9")
	cases := []struct {
		name       string
		kind       commitGroupKind
		txn        bool
		version    int16
		memberID   string
		instanceID *string
		generation int32
		want       int16
	}{
		// Classic group, OffsetCommit.
		{"simple commit to empty group", classicEmpty, false, 8, "", nil, -1, ok},
		{"simple commit to stable group", classicStable, false, 8, "", nil, -1, kerr.UnknownMemberID.Code},
		{"simple commit during rebalance", classicPreparing, false, 8, "", nil, -1, kerr.UnknownMemberID.Code},
		{"member commit at generation", classicStable, false, 8, "m1", nil, 5, ok},
		{"member commit old generation", classicStable, false, 8, "m1", nil, 4, kerr.IllegalGeneration.Code},
		{"unknown member", classicStable, false, 8, "zz", nil, 5, kerr.UnknownMemberID.Code},
		{"member without generation", classicStable, false, 8, "m1", nil, -1, kerr.IllegalGeneration.Code},
		{"generation without member", classicStable, false, 8, "", nil, 5, kerr.UnknownMemberID.Code},
		{"member commit while completing", classicCompleting, false, 8, "m1", nil, 5, kerr.RebalanceInProgress.Code},
		{"member commit while preparing", classicPreparing, false, 8, "m1", nil, 5, ok},
		{"static member", classicStable, false, 8, "m2", i2, 5, ok},
		{"static member fenced", classicStable, false, 8, "m1", i2, 5, kerr.FencedInstanceID.Code},
		{"unknown instance", classicStable, false, 8, "m2", other, 5, kerr.UnknownMemberID.Code},
		{"instance alone", classicStable, false, 8, "", i2, -1, kerr.FencedInstanceID.Code},
		{"member commit to empty group", classicEmpty, false, 8, "m1", nil, 5, kerr.UnknownMemberID.Code},
		{"dead group", classicDead, false, 8, "", nil, -1, kerr.CoordinatorNotAvailable.Code},
		{"no group, simple commit", noGroup, false, 8, "", nil, -1, ok},
		{"no group, member commit v8", noGroup, false, 8, "m1", nil, 5, kerr.IllegalGeneration.Code},
		{"no group, member commit v9", noGroup, false, 9, "m1", nil, 5, kerr.GroupIDNotFound.Code},

		// Classic group, TxnOffsetCommit.
		{"txn legacy form to stable group", classicStable, true, 2, "", nil, -1, ok},
		{"txn v3 without metadata to stable group", classicStable, true, 3, "", nil, -1, ok},
		{"txn without metadata while preparing", classicPreparing, true, 3, "", nil, -1, ok},
		{"txn without metadata while completing", classicCompleting, true, 3, "", nil, -1, ok},
		{"txn without metadata to empty group", classicEmpty, true, 3, "", nil, -1, ok},
		{"txn member at generation", classicStable, true, 3, "m1", nil, 5, ok},
		{"txn member while completing", classicCompleting, true, 3, "m1", nil, 5, ok},
		{"txn member old generation", classicStable, true, 3, "m1", nil, 4, kerr.IllegalGeneration.Code},
		{"txn unknown member", classicStable, true, 3, "zz", nil, 5, kerr.UnknownMemberID.Code},
		{"txn static member fenced", classicStable, true, 3, "m1", i2, 5, kerr.FencedInstanceID.Code},
		{"txn dead group", classicDead, true, 3, "", nil, -1, kerr.CoordinatorNotAvailable.Code},
		{"txn no group without generation", noGroup, true, 3, "", nil, -1, ok},
		{"txn no group with generation", noGroup, true, 3, "m1", nil, 5, kerr.IllegalGeneration.Code},

		// Consumer (KIP-848) group, OffsetCommit.
		{"consumer group empty, simple commit", consumerEmpty, false, 9, "", nil, -1, ok},
		{"consumer group active, simple commit", consumerActive, false, 9, "", nil, -1, kerr.UnknownMemberID.Code},
		{"consumer member at epoch", consumerActive, false, 9, "c1", nil, 7, ok},
		{"consumer member stale epoch", consumerActive, false, 9, "c1", nil, 6, kerr.StaleMemberEpoch.Code},
		{"consumer member before v9", consumerActive, false, 8, "c1", nil, 7, kerr.UnsupportedVersion.Code},
		{"consumer unknown member", consumerActive, false, 9, "zz", nil, 7, kerr.UnknownMemberID.Code},

		// Consumer group, TxnOffsetCommit.
		{"consumer txn without metadata", consumerActive, true, 3, "", nil, -1, ok},
		{"consumer txn legacy form", consumerActive, true, 0, "", nil, -1, ok},
		{"consumer txn member at epoch", consumerActive, true, 3, "c1", nil, 7, ok},
		{"consumer txn stale epoch", consumerActive, true, 3, "c1", nil, 6, kerr.IllegalGeneration.Code},
		{"consumer txn unknown member", consumerActive, true, 3, "zz", nil, 7, kerr.UnknownMemberID.Code},
		{"consumer txn instance without member", consumerActive, true, 3, "", i2, -1, kerr.UnknownMemberID.Code},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := commitValidationShard(tc.kind)
			var got int16
			if tc.txn {
				req := kmsg.NewPtrTxnOffsetCommitRequest()
				req.Version, req.Group = tc.version, "g"
				req.MemberID, req.InstanceID, req.Generation = tc.memberID, tc.instanceID, tc.generation
				got = s.validateTxnOffsetCommit(req)
			} else {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Version, req.Group = tc.version, "g"
				req.MemberID, req.InstanceID, req.Generation = tc.memberID, tc.instanceID, tc.generation
				got = s.validateCommit(req)
			}
			if got != tc.want {
				t.Fatalf("got %v, want %v", kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
			}
		})
	}
}
