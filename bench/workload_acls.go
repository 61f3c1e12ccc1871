package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/bench"
	"github.com/samsa-streaming/samsa/internal/config"
)

// benchACLCount is how many ACLs workload (i) loads: the 10,000.
const benchACLCount = 10000

// aclWorkloads are (h) and (i): the same produce and raw consume with the
// authorizer off, then on with benchACLCount ACLs, the load's principal
// (User:ANONYMOUS on plaintext) allowed by prefixed ACLs among them. Their
// ratio is the authorizer's cost on the data path.
func aclWorkloads() []workload {
	metrics := aclMetrics
	return []workload{
		{id: "h", title: "produce 1 KiB (as a), then raw consume, authorizer off",
			metrics: metrics("ACLs off"), run: func(ctx context.Context, env *runEnv) (sample, error) { return runACLLoad(ctx, env, false) }},
		{id: "i", title: fmt.Sprintf("as (h) with the authorizer on and %d ACLs, the principal allowed by prefixed ACLs", benchACLCount),
			samsaOverrides: []string{"authorizer.class.name=" + config.StandardAuthorizerClass, "allow.everyone.if.no.acl.found=true"},
			metrics:        metrics("10,000 ACLs"), run: func(ctx context.Context, env *runEnv) (sample, error) { return runACLLoad(ctx, env, true) }},
	}
}

// aclMetrics are the figures of (h), (i) and (l), labelled with suffix.
func aclMetrics(suffix string) []metric {
	return []metric{
		{key: keyMBps, label: "produce, " + suffix + " (MB/s)", limit: limitLoopback, digits: 1},
		{key: keyAckP99, label: "ack latency p99, " + suffix + " (ms)", lowerIsBetter: true, digits: 2},
		{key: "raw_mbps", label: "consume, raw fetch, " + suffix + " (MB/s)", limit: limitSendfile, digits: 0},
		{key: keyCPUPerGB, label: "broker CPU, " + suffix + " (s/GB in)", lowerIsBetter: true, digits: 2},
	}
}

// runACLLoad produces as (a) does, then reads everything back with raw
// fetches. With acls, it first loads the ACLs (on Samsa; kfake runs the
// load without them). allow.everyone.if.no.acl.found lets the principal
// create the ACLs and the topic, whose own ACLs are the prefixed ones.
func runACLLoad(ctx context.Context, env *runEnv, acls bool) (sample, error) {
	const topic = "bench"
	if acls && env.broker.role == roleSamsa {
		if err := loadBenchACLs(ctx, env.broker.addr); err != nil {
			return nil, fmt.Errorf("load ACLs: %w", err)
		}
	}
	spec := produceSpec{recordBytes: 1024, acks: 1, partitions: 12, producers: 1}
	if err := createTopic(ctx, env, topic, spec.partitions); err != nil {
		return nil, err
	}
	p, err := beginPhase(env)
	if err != nil {
		return nil, err
	}
	r, err := bench.Produce(ctx, spec.config(env, topic))
	if err != nil {
		return nil, err
	}
	if err := resultError(r); err != nil {
		return nil, err
	}
	s := sample{recordsKey: float64(r.Records), keyMBps: r.MBPerSecond(), keyAckP99: ms(r.Latency.P99)}
	if err := p.endPerGB(s, r.Bytes); err != nil {
		return nil, err
	}
	raw, err := bench.Consume(ctx, bench.ConsumeConfig{
		Brokers: []string{env.broker.addr}, ClientOpts: env.clientOpts, Topic: topic, Records: r.Records + 1, RawFetch: true,
		IdleTimeout: 10 * time.Second, ProgressInterval: time.Second, Progress: env.progress,
	})
	if err == nil {
		err = resultError(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("raw fetch: %w", err)
	}
	s["raw_mbps"] = raw.MBPerSecond()
	return s, nil
}

// loadBenchACLs creates benchACLCount ACLs: the principal's prefixed ALLOW
// for every operation the load needs on "bench", and the rest for other
// principals on other topics and groups, literal and prefixed, some of
// them DENY and some host-bound, so the index is the size and shape a
// busy cluster has.
func loadBenchACLs(ctx context.Context, addr string) error {
	client, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer client.Close()
	req := kmsg.NewPtrCreateACLsRequest()
	add := func(rt kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pattern
		c.Principal, c.Host, c.Operation, c.PermissionType = principal, host, op, perm
		req.Creations = append(req.Creations, c)
	}
	for _, op := range []kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationCreate} {
		add(kmsg.ACLResourceTypeTopic, "ben", kmsg.ACLResourcePatternTypePrefixed, "User:ANONYMOUS", "*", op, kmsg.ACLPermissionTypeAllow)
	}
	for i := 0; len(req.Creations) < benchACLCount; i++ {
		principal := fmt.Sprintf("User:app-%d", i%500)
		switch i % 5 {
		case 0:
			add(kmsg.ACLResourceTypeTopic, fmt.Sprintf("orders-%d", i), kmsg.ACLResourcePatternTypeLiteral, principal, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)
		case 1:
			add(kmsg.ACLResourceTypeGroup, fmt.Sprintf("group-%d", i), kmsg.ACLResourcePatternTypeLiteral, principal, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)
		case 2:
			add(kmsg.ACLResourceTypeTopic, fmt.Sprintf("team-%d-", i), kmsg.ACLResourcePatternTypePrefixed, principal, "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow)
		case 3:
			add(kmsg.ACLResourceTypeTopic, fmt.Sprintf("orders-%d", i-3), kmsg.ACLResourcePatternTypeLiteral, principal,
				fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256), kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeDeny)
		default:
			add(kmsg.ACLResourceTypeTransactionalId, fmt.Sprintf("txn-%d", i), kmsg.ACLResourcePatternTypeLiteral, principal, "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		return err
	}
	for _, res := range resp.Results {
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}
