package server

import (
	"errors"
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsFeatures asks the node's ApiVersions at version (kgo would
// negotiate its own) for its supported ranges and finalized levels.
func apiVersionsFeatures(t *testing.T, tn *testNode, version int16) (supported map[string][2]int16, finalized map[string]int16) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-test", "1"
	rc := dialRaw(t, tn)
	rc.request(req, version)
	resp := kmsg.NewPtrApiVersionsResponse()
	rc.response(resp, version)
	supported, finalized = map[string][2]int16{}, map[string]int16{}
	for _, f := range resp.SupportedFeatures {
		supported[f.Name] = [2]int16{f.MinVersion, f.MaxVersion}
	}
	for _, f := range resp.FinalizedFeatures {
		if f.MinVersionLevel != f.MaxVersionLevel {
			t.Fatalf("%s finalized at %d-%d: a KRaft cluster finalizes one level", f.Name, f.MinVersionLevel, f.MaxVersionLevel)
		}
		finalized[f.Name] = f.MaxVersionLevel
	}
	return supported, finalized
}

// TestUpdateFeatures drives UpdateFeatures with kadm and reads the result
// back from ApiVersions, across a restart.
func TestUpdateFeatures(t *testing.T) {
	tn := startTestNode(t)
	ctx := testContext(t)
	cl := tn.client()
	adm := kadm.NewClient(cl)

	supported, finalized := apiVersionsFeatures(t, tn, 4)
	wantSupported := map[string][2]int16{"metadata.version": {7, 25}, "group.version": {0, 1}, "streams.version": {0, 1}, "transaction.version": {0, 2}, "kraft.version": {0, 1}, "share.version": {0, 1}}
	if !maps.Equal(supported, wantSupported) {
		t.Fatalf("supported features %v, want %v", supported, wantSupported)
	}
	if want := map[string]int16{"metadata.version": 25, "group.version": 1, "streams.version": 1, "transaction.version": 2, "share.version": 1}; !maps.Equal(finalized, want) {
		t.Fatalf("finalized features %v, want %v", finalized, want)
	}
	// Below v4, ranges starting at 0 are left out for older clients.
	if supported, _ := apiVersionsFeatures(t, tn, 3); !maps.Equal(supported, map[string][2]int16{"metadata.version": {7, 25}}) {
		t.Fatalf("v3 supported features %v", supported)
	}

	const upgrade, safe, unsafe = 1, 2, 3
	refused := [][]kadm.FeatureUpdate{
		{{Feature: "metadata.version", MaxVersionLevel: 26, UpgradeType: upgrade}},
		{{Feature: "metadata.version", MaxVersionLevel: 24, UpgradeType: upgrade}},
		{{Feature: "metadata.version", MaxVersionLevel: 22, UpgradeType: safe}},
		{{Feature: "metadata.version", MaxVersionLevel: 22, UpgradeType: unsafe}},
		{{Feature: "transaction.version", MaxVersionLevel: 3, UpgradeType: upgrade}},
		{{Feature: "kraft.version", MaxVersionLevel: 2, UpgradeType: upgrade}},
		{{Feature: "group.version", MaxVersionLevel: 0, UpgradeType: safe}, {Feature: "no.such.feature", MaxVersionLevel: 1, UpgradeType: upgrade}},
	}
	for _, updates := range refused {
		res, err := adm.UpdateFeatures(ctx, false, updates...)
		if err == nil {
			err = res.Error()
		}
		if !errors.Is(err, kerr.InvalidUpdateVersion) {
			t.Fatalf("%+v: %v, want INVALID_UPDATE_VERSION", updates, err)
		}
	}
	// Validate-only changes nothing.
	if res, err := adm.UpdateFeatures(ctx, true, kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 0, UpgradeType: safe}); err != nil || res.Error() != nil {
		t.Fatalf("validate only: %v %v", err, res.Error())
	}
	if _, finalized := apiVersionsFeatures(t, tn, 4); finalized["group.version"] != 1 || finalized["metadata.version"] != 25 {
		t.Fatalf("refused or validate-only updates changed the levels: %v", finalized)
	}

	// group.version 0 turns the consumer group protocol off, streams.version
	// 0 the streams group protocol, share.version 0 share groups.
	res, err := adm.UpdateFeatures(ctx, false,
		kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 0, UpgradeType: safe},
		kadm.FeatureUpdate{Feature: "streams.version", MaxVersionLevel: 0, UpgradeType: safe},
		kadm.FeatureUpdate{Feature: "share.version", MaxVersionLevel: 0, UpgradeType: safe},
		kadm.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 24, UpgradeType: safe})
	if err != nil || res.Error() != nil {
		t.Fatalf("downgrade: %v %v", err, res.Error())
	}
	want := map[string]int16{"metadata.version": 24, "transaction.version": 2}
	if _, finalized := apiVersionsFeatures(t, tn, 4); !maps.Equal(finalized, want) {
		t.Fatalf("after the downgrade %v, want %v", finalized, want)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "g", "m-1", 0, 30000
	hb.SubscribedTopicNames = []string{"t"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	hbResp, err := hb.RequestWith(ctx, cl)
	if err != nil || hbResp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("ConsumerGroupHeartbeat with group.version 0: %v code %d, want UNSUPPORTED_VERSION", err, hbResp.ErrorCode)
	}
	shb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	shb.Group, shb.MemberID, shb.MemberEpoch, shb.RebalanceTimeoutMillis = "app", "s-1", 0, 30000
	shbConn := dialRaw(t, tn)
	shbConn.request(shb, 1)
	shbResp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	shbConn.response(shbResp, 1)
	if shbResp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("StreamsGroupHeartbeat with streams.version 0: code %d, want UNSUPPORTED_VERSION", shbResp.ErrorCode)
	}
	sghb := kmsg.NewPtrShareGroupHeartbeatRequest()
	sghb.GroupID, sghb.MemberID, sghb.MemberEpoch = "sg", "sm-1", 0
	sghb.SubscribedTopicNames = []string{"t"}
	sghbResp, err := sghb.RequestWith(ctx, cl)
	if err != nil || sghbResp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("ShareGroupHeartbeat with share.version 0: %v code %d, want UNSUPPORTED_VERSION", err, sghbResp.ErrorCode)
	}

	// UpdateFeatures v0 (allow_downgrade) and v1 (a result per feature).
	v0 := kmsg.NewPtrUpdateFeaturesRequest()
	v0.SetVersion(0)
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.AllowDowngrade = "transaction.version", 1, true
	v0.FeatureUpdates = append(v0.FeatureUpdates, u)
	rc := dialRaw(t, tn)
	rc.request(v0, 0)
	v0Resp := kmsg.NewPtrUpdateFeaturesResponse()
	rc.response(v0Resp, 0)
	if v0Resp.ErrorCode != 0 || len(v0Resp.Results) != 1 || v0Resp.Results[0].ErrorCode != 0 {
		t.Fatalf("v0 downgrade: %+v", v0Resp)
	}
	v1 := kmsg.NewPtrUpdateFeaturesRequest()
	v1.SetVersion(1)
	u = kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = "transaction.version", 0, upgrade
	v1.FeatureUpdates = append(v1.FeatureUpdates, u)
	rc.request(v1, 1)
	v1Resp := kmsg.NewPtrUpdateFeaturesResponse()
	rc.response(v1Resp, 1)
	if v1Resp.ErrorCode != kerr.InvalidUpdateVersion.Code || len(v1Resp.Results) != 1 || v1Resp.Results[0].ErrorCode != kerr.InvalidUpdateVersion.Code || v1Resp.Results[0].ErrorMessage == nil {
		t.Fatalf("v1 downgrade without a downgrade type: %+v", v1Resp)
	}
	t.Logf("refusal: %s", *v1Resp.Results[0].ErrorMessage)

	// The levels are metadata: they survive a restart, and upgrades work.
	tn.restart()
	cl = tn.client()
	adm = kadm.NewClient(cl)
	want = map[string]int16{"metadata.version": 24, "transaction.version": 1}
	if _, finalized := apiVersionsFeatures(t, tn, 4); !maps.Equal(finalized, want) {
		t.Fatalf("after a restart %v, want %v", finalized, want)
	}
	res, err = adm.UpdateFeatures(ctx, false,
		kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 1, UpgradeType: upgrade},
		kadm.FeatureUpdate{Feature: "streams.version", MaxVersionLevel: 1, UpgradeType: upgrade},
		kadm.FeatureUpdate{Feature: "share.version", MaxVersionLevel: 1, UpgradeType: upgrade},
		kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 2, UpgradeType: upgrade},
		kadm.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 25, UpgradeType: upgrade})
	if err != nil || res.Error() != nil {
		t.Fatalf("upgrade: %v %v", err, res.Error())
	}
	want = map[string]int16{"metadata.version": 25, "group.version": 1, "streams.version": 1, "transaction.version": 2, "share.version": 1}
	if _, finalized := apiVersionsFeatures(t, tn, 4); !maps.Equal(finalized, want) {
		t.Fatalf("after the upgrade %v, want %v", finalized, want)
	}
	if sghbResp, err = sghb.RequestWith(ctx, cl); err != nil || sghbResp.ErrorCode != 0 {
		t.Fatalf("ShareGroupHeartbeat with share.version 1: %v code %d", err, sghbResp.ErrorCode)
	}
	hbResp, err = hb.RequestWith(ctx, cl)
	if err != nil || hbResp.ErrorCode != 0 {
		t.Fatalf("ConsumerGroupHeartbeat with group.version 1: %v code %d %v", err, hbResp.ErrorCode, *hbResp.ErrorMessage)
	}

	// kraft.version 1 (KIP-853) is the quorum's: it is finalized once the
	// voter set is in the metadata log, survives a restart, and cannot be
	// downgraded.
	res, err = adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "kraft.version", MaxVersionLevel: 1, UpgradeType: upgrade})
	if err != nil || res.Error() != nil {
		t.Fatalf("kraft.version upgrade: %v %v", err, res.Error())
	}
	tn.restart()
	cl = tn.client()
	adm = kadm.NewClient(cl)
	if _, finalized := apiVersionsFeatures(t, tn, 4); finalized["kraft.version"] != 1 {
		t.Fatalf("kraft.version after the upgrade and a restart: %v", finalized)
	}
	res, err = adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "kraft.version", MaxVersionLevel: 0, UpgradeType: safe})
	if err == nil {
		err = res.Error()
	}
	if !errors.Is(err, kerr.InvalidUpdateVersion) {
		t.Fatalf("kraft.version downgrade: %v, want INVALID_UPDATE_VERSION", err)
	}
}
