package quorum

import (
	"errors"
	"slices"
	"testing"
)

func TestParseVoters(t *testing.T) {
	got, err := ParseVoters("1@host-a:9093, 2@10.0.0.2:9093,3@[::1]:9093")
	if err != nil {
		t.Fatal(err)
	}
	want := []Voter{{1, "host-a:9093"}, {2, "10.0.0.2:9093"}, {3, "[::1]:9093"}}
	if !slices.Equal(got, want) {
		t.Fatalf("ParseVoters = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "1", "x@h:1", "1@nohost", "0@h:1", "1@h:1,1@h:2", "-2@h:1"} {
		if _, err := ParseVoters(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseVoters(%q) = %v, want ErrConfig", bad, err)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	voters := []Voter{{1, "h:1"}, {2, "h:2"}}
	for name, cfg := range map[string]Config{
		"not a voter":        {NodeID: 3, Voters: voters, Dir: "d", ListenAddr: ":0"},
		"no dir":             {NodeID: 1, Voters: voters, ListenAddr: ":0"},
		"no listener":        {NodeID: 1, Voters: voters, Dir: "d"},
		"heartbeat too slow": {NodeID: 1, Voters: voters, Dir: "d", ListenAddr: ":0", ElectionTicks: 3, HeartbeatTicks: 3},
	} {
		if _, err := cfg.withDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	cfg, err := Config{NodeID: 1, Voters: voters, Dir: "d", ListenAddr: ":0"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickMs*cfg.ElectionTicks != 1000 || cfg.SnapshotIntervalBytes != 20<<20 || cfg.SnapshotIntervalMs != 3600000 {
		t.Fatalf("defaults %+v", cfg)
	}
	if cfg.maxFrameBytes() < cfg.MaxSnapshotBytes {
		t.Fatalf("frame limit %d below the snapshot limit %d", cfg.maxFrameBytes(), cfg.MaxSnapshotBytes)
	}
}

func TestSnapshotIntervalMsDisabled(t *testing.T) {
	cfg := Config{NodeID: 1, Dir: t.TempDir(), ListenAddr: "127.0.0.1:0", Voters: []Voter{{ID: 1, Addr: "127.0.0.1:0"}}, SnapshotIntervalMs: -1}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SnapshotIntervalMs != -1 {
		t.Fatalf("SnapshotIntervalMs -1 (disabled) became %d", cfg.SnapshotIntervalMs)
	}
}
