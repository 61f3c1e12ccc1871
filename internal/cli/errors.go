package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// usageError is a mistake in the command line itself: a bad flag, a missing
// argument, flags that contradict each other.
type usageError struct {
	err         error
	commandPath string
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func newUsageError(commandPath, format string, args ...any) usageError {
	return usageError{err: fmt.Errorf(format, args...), commandPath: commandPath}
}

// hintedError carries advice for the user beside the error itself.
type hintedError struct {
	err  error
	hint string
}

func (e hintedError) Error() string { return e.err.Error() }
func (e hintedError) Unwrap() error { return e.err }

func withHint(err error, format string, args ...any) error {
	return hintedError{err: err, hint: fmt.Sprintf(format, args...)}
}

// kafkaError attaches the broker's optional error message to a Kafka error
// code, keeping the *kerr.Error reachable with errors.As.
func kafkaError(err error, message string) error {
	if err == nil {
		return nil
	}
	if message == "" || strings.Contains(err.Error(), message) {
		return err
	}
	return fmt.Errorf("%w (broker says: %s)", err, message)
}

// kafkaErrorHints says what to do about the Kafka errors a CLI user meets
// most often.
var kafkaErrorHints = map[*kerr.Error]string{
	kerr.UnknownTopicOrPartition:    "check the name with 'samsa topics list'",
	kerr.TopicAlreadyExists:         "inspect it with 'samsa topics describe', or pass --if-not-exists",
	kerr.InvalidTopicException:      "topic names are 1-249 characters of ASCII letters, digits, '.', '_' and '-'",
	kerr.InvalidReplicationFactor:   "the replication factor cannot exceed the number of brokers; see 'samsa cluster describe'",
	kerr.InvalidPartitions:          "the partition count must be positive and can only grow",
	kerr.InvalidReplicaAssignment:   "every replica must name a live broker; see 'samsa cluster describe'",
	kerr.InvalidConfig:              "check the config name and value; 'samsa configs describe --all' lists valid names",
	kerr.InvalidRequest:             "the broker rejected the request; check config names and values and the command's arguments",
	kerr.PolicyViolation:            "the broker's create/alter policy forbids this change",
	kerr.TopicDeletionDisabled:      "the brokers run with delete.topic.enable=false",
	kerr.GroupIDNotFound:            "check the name with 'samsa groups list'",
	kerr.NonEmptyGroup:              "stop the group's consumers first",
	kerr.GroupAuthorizationFailed:   "the client's principal lacks an ACL for this group",
	kerr.TopicAuthorizationFailed:   "the client's principal lacks an ACL for this topic",
	kerr.ClusterAuthorizationFailed: "the client's principal lacks an ACL on the cluster",
	kerr.CoordinatorNotAvailable:    "the group coordinator is starting or moving; retry shortly",
	kerr.CoordinatorLoadInProgress:  "the group coordinator is loading its state; retry shortly",
	kerr.NotController:              "the controller is moving; retry shortly",
	kerr.RequestTimedOut:            "the cluster did not finish in time; retry, or raise --timeout",
	kerr.UnsupportedVersion:         "this cluster does not support the request",
	kerr.MessageTooLarge:            "the record exceeds max.message.bytes; raise it on the topic or send smaller records",
	kerr.RecordListTooLarge:         "the batch exceeds max.message.bytes; raise it on the topic",
	kerr.NotEnoughReplicas:          "fewer replicas are in sync than min.insync.replicas; check 'samsa topics describe --under-replicated'",
	kerr.LeaderNotAvailable:         "the partition has no leader right now; check 'samsa topics describe --unavailable'",
	kerr.UnknownMemberID:            "the consumer group rebalanced; retry",
}

// formatError renders a command failure as one line: the error, the Kafka
// error name when there is one, and a hint.
func (o *globalOptions) formatError(err error) string {
	message := err.Error()
	hint := o.hintFor(err)
	if unreachable := o.explainUnreachable(err); unreachable != "" {
		message = unreachable
	}
	line := "error: " + message
	if hint != "" {
		line += " (hint: " + hint + ")"
	}
	return strings.Join(strings.Fields(line), " ")
}

func (o *globalOptions) hintFor(err error) string {
	if hinted, ok := errors.AsType[hintedError](err); ok {
		return hinted.hint
	}
	if usage, ok := errors.AsType[usageError](err); ok {
		if usage.commandPath == "" {
			return ""
		}
		return fmt.Sprintf("see '%s --help'", usage.commandPath)
	}
	if strings.HasPrefix(err.Error(), "unknown command") {
		return "see 'samsa --help'"
	}
	if o.isUnreachable(err) {
		return fmt.Sprintf("check that a broker is listening at %s; set --bootstrap-server or %s", o.bootstrapList(), bootstrapServersEnv)
	}
	if kafka, ok := errors.AsType[*kerr.Error](err); ok {
		return kafkaErrorHints[kafka]
	}
	return ""
}

// isUnreachable reports whether err means the cluster never answered: the
// request timed out or no connection could be made.
func (o *globalOptions) isUnreachable(err error) bool {
	if _, ok := errors.AsType[*kerr.Error](err); ok {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	_, isNetErr := errors.AsType[*net.OpError](err)
	return isNetErr
}

// explainUnreachable rewrites a timeout into a sentence that says what was
// being waited for and how long; other errors are left alone.
func (o *globalOptions) explainUnreachable(err error) string {
	if !o.isUnreachable(err) {
		return ""
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s: timed out after %s waiting for the cluster at %s", operationOf(err), o.requestTimeout, o.bootstrapList())
	}
	cause := error(err)
	if netErr, ok := errors.AsType[*net.OpError](err); ok {
		cause = rootCause(netErr)
	}
	return fmt.Sprintf("%s: cannot reach the cluster at %s: %v", operationOf(err), o.bootstrapList(), cause)
}

// operationOf returns the text before the first ": " of err, which by
// convention here names the operation that failed ("create topic \"x\"").
func operationOf(err error) string {
	operation, _, _ := strings.Cut(err.Error(), ": ")
	return operation
}

func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
