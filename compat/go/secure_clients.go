package main

import (
	"context"
	"crypto/sha512"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	kafkasasl "github.com/segmentio/kafka-go/sasl"
	kafkagoplain "github.com/segmentio/kafka-go/sasl/plain"
	kafkagoscram "github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	xdgscram "github.com/xdg-go/scram"
)

func init() {
	withSecurity(franzDriver, franzSecure)
	withSecurity(saramaDriver, saramaSecure)
	withSecurity(kafkaGoDriver, kafkaGoSecure)
	withSecurity(kcatDriver, kcatSecure)
}

// franz-go: kgo.DialTLSConfig and the sasl/scram, sasl/plain and
// sasl/oauth mechanisms.
func franzSecureOpts(s secureSettings) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(s.bootstrap), kgo.ClientID("compat-franz-go"), kgo.RetryTimeout(15 * time.Second)}
	cfg, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	var mechanism sasl.Mechanism
	switch s.mechanism {
	case "SCRAM-SHA-512":
		mechanism = scram.Auth{User: s.user, Pass: s.password}.AsSha512Mechanism()
	case "PLAIN":
		mechanism = plain.Auth{User: s.user, Pass: s.password}.AsMechanism()
	case "OAUTHBEARER":
		mechanism = oauth.Auth{Token: unsecuredToken(s.user)}.AsMechanism()
	}
	if mechanism != nil {
		opts = append(opts, kgo.SASL(mechanism))
	}
	return opts, nil
}

var franzSecure = secureRun{
	produce: func(ctx context.Context, s secureSettings, topic string, values []string) error {
		opts, err := franzSecureOpts(s)
		if err != nil {
			return err
		}
		cl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(topic))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		records := make([]*kgo.Record, len(values))
		for i, v := range values {
			records[i] = &kgo.Record{Value: []byte(v)}
		}
		return cl.ProduceSync(ctx, records...).FirstErr()
	},
	consume: func(ctx context.Context, s secureSettings, topic string, n int) ([]string, error) {
		opts, err := franzSecureOpts(s)
		if err != nil {
			return nil, err
		}
		cl, err := kgo.NewClient(append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))...)
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		var got []string
		for len(got) < n {
			fs := cl.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				return got, err
			}
			if err := fs.Err(); err != nil {
				return got, err
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		return got, nil
	},
	refused: func(ctx context.Context, s secureSettings, topic string) error {
		opts, err := franzSecureOpts(s)
		if err != nil {
			return err
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return err
		}
		defer cl.Close()
		return cl.Ping(ctx)
	},
}

// sarama: Net.TLS and Net.SASL, with xdg-go/scram as sarama's
// documentation has it for SCRAM and a TokenProvider for OAUTHBEARER.
type saramaXDGScram struct{ conversation *xdgscram.ClientConversation }

func (x *saramaXDGScram) Begin(user, password, authzID string) error {
	client, err := xdgscram.HashGeneratorFcn(sha512.New).NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	x.conversation = client.NewConversation()
	return nil
}

func (x *saramaXDGScram) Step(challenge string) (string, error) {
	return x.conversation.Step(challenge)
}
func (x *saramaXDGScram) Done() bool { return x.conversation.Done() }

type saramaToken struct{ token string }

func (t saramaToken) Token() (*sarama.AccessToken, error) {
	return &sarama.AccessToken{Token: t.token}, nil
}

func saramaSecureConfig(s secureSettings) (*sarama.Config, error) {
	c := saramaConfig()
	c.Metadata.Retry.Max = 2
	cfg, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		c.Net.TLS.Enable, c.Net.TLS.Config = true, cfg
	}
	if s.mechanism != "" {
		c.Net.SASL.Enable = true
		c.Net.SASL.Mechanism = sarama.SASLMechanism(s.mechanism)
		c.Net.SASL.User, c.Net.SASL.Password = s.user, s.password
		switch s.mechanism {
		case "SCRAM-SHA-512":
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramaXDGScram{} }
		case "OAUTHBEARER":
			c.Net.SASL.TokenProvider = saramaToken{unsecuredToken(s.user)}
		}
	}
	return c, nil
}

var saramaSecure = secureRun{
	produce: func(ctx context.Context, s secureSettings, topic string, values []string) error {
		c, err := saramaSecureConfig(s)
		if err != nil {
			return err
		}
		c.Producer.RequiredAcks = sarama.WaitForAll
		p, err := sarama.NewSyncProducer([]string{s.bootstrap}, c)
		if err != nil {
			return err
		}
		defer p.Close()
		messages := make([]*sarama.ProducerMessage, len(values))
		for i, v := range values {
			messages[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)}
		}
		return p.SendMessages(messages)
	},
	consume: func(ctx context.Context, s secureSettings, topic string, n int) ([]string, error) {
		c, err := saramaSecureConfig(s)
		if err != nil {
			return nil, err
		}
		consumer, err := sarama.NewConsumer([]string{s.bootstrap}, c)
		if err != nil {
			return nil, err
		}
		defer consumer.Close()
		pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		defer pc.Close()
		var got []string
		for len(got) < n {
			select {
			case m := <-pc.Messages():
				got = append(got, string(m.Value))
			case err := <-pc.Errors():
				return got, err
			case <-ctx.Done():
				return got, ctx.Err()
			}
		}
		return got, nil
	},
	refused: func(ctx context.Context, s secureSettings, topic string) error {
		c, err := saramaSecureConfig(s)
		if err != nil {
			return err
		}
		c.Metadata.Retry.Max = 0
		cl, err := sarama.NewClient([]string{s.bootstrap}, c)
		if err == nil {
			cl.Close()
		}
		return err
	},
}

// kafka-go: a Transport and a Dialer with TLS and its sasl/scram and
// sasl/plain mechanisms. It ships no OAUTHBEARER mechanism, so the driver
// implements kafka-go's sasl.Mechanism interface for it, as its users do
// (RFC 7628's initial client response, then no further steps).
type kafkaGoOAuth struct{ token string }

func (o kafkaGoOAuth) Name() string { return "OAUTHBEARER" }

func (o kafkaGoOAuth) Start(context.Context) (kafkasasl.StateMachine, []byte, error) {
	return o, []byte("n,,\x01auth=Bearer " + o.token + "\x01\x01"), nil
}

func (o kafkaGoOAuth) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	if len(challenge) > 0 {
		return false, nil, fmt.Errorf("OAUTHBEARER refused: %s", challenge)
	}
	return true, nil, nil
}

func kafkaGoMechanism(s secureSettings) (kafkasasl.Mechanism, error) {
	switch s.mechanism {
	case "SCRAM-SHA-512":
		return kafkagoscram.Mechanism(kafkagoscram.SHA512, s.user, s.password)
	case "PLAIN":
		return kafkagoplain.Mechanism{Username: s.user, Password: s.password}, nil
	case "OAUTHBEARER":
		return kafkaGoOAuth{unsecuredToken(s.user)}, nil
	}
	return nil, nil
}

func kafkaGoDialer(s secureSettings) (*kafka.Dialer, error) {
	cfg, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	mechanism, err := kafkaGoMechanism(s)
	if err != nil {
		return nil, err
	}
	return &kafka.Dialer{Timeout: 10 * time.Second, TLS: cfg, SASLMechanism: mechanism, ClientID: "compat-kafka-go"}, nil
}

var kafkaGoSecure = secureRun{
	produce: func(ctx context.Context, s secureSettings, topic string, values []string) error {
		cfg, err := s.tlsConfig()
		if err != nil {
			return err
		}
		mechanism, err := kafkaGoMechanism(s)
		if err != nil {
			return err
		}
		w := &kafka.Writer{
			Addr:         kafka.TCP(s.bootstrap),
			Topic:        topic,
			RequiredAcks: kafka.RequireAll,
			Balancer:     &kafka.LeastBytes{},
			BatchTimeout: 5 * time.Millisecond,
			Transport:    &kafka.Transport{TLS: cfg, SASL: mechanism, ClientID: "compat-kafka-go"},
		}
		defer w.Close()
		messages := make([]kafka.Message, len(values))
		for i, v := range values {
			messages[i] = kafka.Message{Value: []byte(v)}
		}
		return kgFirstWriteError(w.WriteMessages(ctx, messages...))
	},
	consume: func(ctx context.Context, s secureSettings, topic string, n int) ([]string, error) {
		dialer, err := kafkaGoDialer(s)
		if err != nil {
			return nil, err
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{s.bootstrap}, Topic: topic, Partition: 0, Dialer: dialer, MaxWait: 200 * time.Millisecond})
		defer r.Close()
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			return nil, err
		}
		var got []string
		for len(got) < n {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				return got, err
			}
			got = append(got, string(m.Value))
		}
		return got, nil
	},
	refused: func(ctx context.Context, s secureSettings, topic string) error {
		dialer, err := kafkaGoDialer(s)
		if err != nil {
			return err
		}
		conn, err := dialer.DialContext(ctx, "tcp", s.bootstrap)
		if err == nil {
			conn.Close()
		}
		return err
	},
}

// kcat: librdkafka's security.protocol, sasl.* and ssl.* properties, and
// its built-in unsecured OAUTHBEARER tokens.
func kcatSecureArgs(s secureSettings) []string {
	args := []string{"-b", s.bootstrap, "-X", "security.protocol=" + strings.ToLower(s.protocol)}
	if s.tls() {
		args = append(args, "-X", "ssl.ca.location="+s.ca)
	}
	switch s.mechanism {
	case "":
		args = append(args, "-X", "ssl.certificate.location="+s.cert, "-X", "ssl.key.location="+s.key)
	case "OAUTHBEARER":
		args = append(args, "-X", "sasl.mechanisms=OAUTHBEARER", "-X", "enable.sasl.oauthbearer.unsecure.jwt=true",
			"-X", "sasl.oauthbearer.config=principal="+s.user)
	default:
		args = append(args, "-X", "sasl.mechanisms="+s.mechanism, "-X", "sasl.username="+s.user, "-X", "sasl.password="+s.password)
	}
	return args
}

func kcatSecureRun(ctx context.Context, s secureSettings, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, kcatBin(), append(kcatSecureArgs(s), args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("kcat %s: %w: %s", strings.Join(args, " "), err, lastLines(string(exit.Stderr), 3))
		}
	}
	return string(out), err
}

var librdkafkaVersion = regexp.MustCompile(`librdkafka (\d+)\.(\d+)\.(\d+)`)

// librdkafkaBefore reports whether the librdkafka named in version is
// older than major.minor.patch.
func librdkafkaBefore(version string, want [3]int) bool {
	m := librdkafkaVersion.FindStringSubmatch(version)
	if m == nil {
		return false
	}
	for i := range 3 {
		n, _ := strconv.Atoi(m[i+1])
		if n != want[i] {
			return n < want[i]
		}
	}
	return false
}

var kcatSecure = secureRun{
	skip: func(scenario string) string {
		if v := kcatVersion(); scenario == "scram-ssl" && librdkafkaBefore(v, [3]int{2, 6, 1}) {
			return "kcat " + v + ": librdkafka before 2.6.1 repeats its client nonce in the SCRAM client-final-message (confluentinc/librdkafka#4895), which Kafka 4.x refuses too"
		}
		return ""
	},
	produce: func(ctx context.Context, s secureSettings, topic string, values []string) error {
		_, err := kcatSecureRun(ctx, s, strings.Join(values, "\n")+"\n", "-P", "-t", topic, "-p", "0", "-X", "acks=all")
		return err
	},
	consume: func(ctx context.Context, s secureSettings, topic string, n int) ([]string, error) {
		out, err := kcatSecureRun(ctx, s, "", "-C", "-t", topic, "-p", "0", "-o", "beginning", "-c", strconv.Itoa(n), "-e", "-q")
		if err != nil {
			return nil, err
		}
		return strings.Split(strings.TrimSuffix(out, "\n"), "\n"), nil
	},
	refused: func(ctx context.Context, s secureSettings, topic string) error {
		_, err := kcatSecureRun(ctx, s, "", "-L", "-t", topic, "-m", "5")
		return err
	},
}
