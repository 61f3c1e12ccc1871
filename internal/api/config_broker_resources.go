package api

// Broker config resources on the node a client sends them to.
//
// A BROKER resource names one broker ("2") or the cluster-wide defaults
// (""); a BROKER_LOGGER resource names one broker's loggers. Clients send a
// request about broker N to broker N, so:
//
//   - DescribeConfigs answers for this node only: another broker's id is
//     INVALID_REQUEST ("Unexpected broker id, ...").
//   - AlterConfigs and IncrementalAlterConfigs are preprocessed by the node
//     that receives them on a client listener, as Kafka's ConfigAdminManager
//     does: a BROKER resource must name this node or be the defaults, and
//     its new overrides are validated against this node's configuration;
//     BROKER_LOGGER changes are applied here and never reach the
//     controller. What is left goes to the active controller (forwarded
//     unless this node is it), which stores it without comparing the
//     resource with its own id: the receiving broker already did.
//   - On the controller listener (forwarded requests, tools talking to the
//     controller directly) a BROKER resource only has to be a node id or "".

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// LoggerLevel is one logger and its level name ("INFO").
type LoggerLevel struct {
	Name  string
	Level string
}

// RuntimeLoggers are the node's loggers whose levels the BROKER_LOGGER
// resource describes and changes (KIP-412); changes last until restart.
type RuntimeLoggers interface {
	// LoggerLevels lists every logger, the root ("root") first.
	LoggerLevels() []LoggerLevel
	LoggerExists(name string) bool
	ValidLevel(level string) bool
	// ValidLevelNames lists the accepted level names, sorted.
	ValidLevelNames() []string
	SetLoggerLevel(name, level string)
	// UnsetLoggerLevel makes the logger follow the root's level.
	UnsetLoggerLevel(name string)
}

// rootLoggerName is the logger a BROKER_LOGGER DELETE may not unset.
const rootLoggerName = "root"

// onControllerListener reports whether c came in on a controller listener.
func (b *Broker) onControllerListener(c *call) bool {
	return b.StaticConfig != nil && c.req != nil && c.req.Conn != nil &&
		slices.Contains(b.StaticConfig.ControllerListenerNames, c.req.Conn.Listener)
}

// checkDescribeBroker is DescribeConfigs' check of a BROKER resource
// (Kafka's ConfigHelper): "" or this node's id.
func (b *Broker) checkDescribeBroker(name string) (int16, string) {
	if name == "" {
		return 0, ""
	}
	id, err := strconv.Atoi(name)
	if err != nil {
		return kerr.InvalidRequest.Code, "Broker id must be an integer, but it is: " + name
	}
	if int32(id) != b.NodeID {
		return kerr.InvalidRequest.Code, "Unexpected broker id, expected " + strconv.Itoa(int(b.NodeID)) + " or empty string, but received " + name
	}
	return 0, ""
}

// checkDescribeBrokerLogger is DescribeConfigs' check of a BROKER_LOGGER
// resource: this node's id, never "".
func (b *Broker) checkDescribeBrokerLogger(name string) (int16, string) {
	if name == "" {
		return kerr.InvalidRequest.Code, "Broker id must not be empty"
	}
	id, err := strconv.Atoi(name)
	if err != nil {
		return kerr.InvalidRequest.Code, "Broker id must be an integer, but it is: " + name
	}
	if int32(id) != b.NodeID {
		return kerr.InvalidRequest.Code, "Unexpected broker id, expected " + strconv.Itoa(int(b.NodeID)) + " but received " + name
	}
	return 0, ""
}

// checkAlterNodeID is the receiving broker's check that an altered BROKER
// or BROKER_LOGGER resource names this node (Kafka's
// validateResourceNameIsCurrentNodeId).
func (b *Broker) checkAlterNodeID(name string) (int16, string) {
	id, err := strconv.Atoi(name)
	if err != nil {
		return kerr.InvalidRequest.Code, "Node id must be an integer, but it is: " + name
	}
	if int32(id) != b.NodeID {
		return kerr.InvalidRequest.Code, "Unexpected broker id, expected " + strconv.Itoa(int(b.NodeID)) + ", but received " + name
	}
	return 0, ""
}

// checkBrokerName is the controller's check of a BROKER resource it is
// asked to store: any node id, or "" for the defaults.
func checkBrokerName(name string) (int16, string) {
	if name == "" {
		return 0, ""
	}
	if _, err := strconv.ParseInt(name, 10, 32); err != nil {
		return kerr.InvalidRequest.Code, "Invalid broker name " + name
	}
	return 0, ""
}

// describeBrokerLoggers lists this node's loggers as BROKER_LOGGER configs.
func (b *Broker) describeBrokerLoggers() []config.ConfigEntry {
	if b.Loggers == nil {
		return nil
	}
	var out []config.ConfigEntry
	for _, l := range b.Loggers.LoggerLevels() {
		out = append(out, config.ConfigEntry{Name: l.Name, Value: strptr(l.Level), Source: kmsg.ConfigSourceDynamicBrokerLoggerConfig})
	}
	return out
}

// resourceResult is one resource's answer, decided before the controller.
type resourceResult struct {
	code    int16
	message string
}

// preprocessBroker validates a BROKER resource on the node that received
// it: it must name this node (or be the defaults) and its new overrides,
// computed by change from this node's image, must be valid here. Nil means
// the resource goes on to the controller.
func (b *Broker) preprocessBroker(name string, change func(current map[string]string) (map[string]string, error)) *resourceResult {
	if name != "" {
		if code, msg := b.checkAlterNodeID(name); code != 0 {
			return &resourceResult{code, msg}
		}
	}
	next, err := change(b.Image().Configs(metadata.ResourceBroker, name))
	if err != nil {
		return &resourceResult{configErrorCode(err), err.Error()}
	}
	if err := b.validateOverrides(metadata.ResourceBroker, name, next); err != nil {
		return &resourceResult{brokerValidationErrorCode(err), brokerValidationMessage(err)}
	}
	if name == "" {
		if keys := perBrokerOnlyKeys(next); len(keys) > 0 {
			return &resourceResult{kerr.InvalidRequest.Code,
				"Cannot update these configs at default cluster level, broker id must be specified: [" + strings.Join(keys, ", ") + "]"}
		}
	}
	return nil
}

// brokerValidationErrorCode is the code of a BROKER resource's new
// overrides refused on the receiving broker. Kafka's ConfigAdminManager
// turns every failure of DynamicBrokerConfig's validation (a read-only key,
// a value of the wrong type or out of range) into INVALID_REQUEST, not
// INVALID_CONFIG as for topics. Kafka stores a broker config name it does
// not know; Samsa refuses it, with INVALID_CONFIG.
func brokerValidationErrorCode(err error) int16 {
	if errors.Is(err, config.ErrUnknownKey) {
		return kerr.InvalidConfig.Code
	}
	return kerr.InvalidRequest.Code
}

// brokerValidationMessage is err's message as Kafka words it: the keys a
// read-only refusal names are listed in brackets.
func brokerValidationMessage(err error) string {
	var configErr *config.Error
	if errors.As(err, &configErr) && errors.Is(err, config.ErrReadOnly) {
		return "Cannot update these configs dynamically: [" + configErr.Key + "]"
	}
	return err.Error()
}

// clusterLevelListenerConfigs are the listener-prefixed configs Kafka lets
// the cluster-wide defaults set (DynamicListenerConfig's
// ClusterLevelListenerConfigs); every other listener.name.<listener>.<key>
// and the reconfigurable listener and SSL keys are per broker only.
var clusterLevelListenerConfigs = map[string]bool{
	"max.connections": true, "max.connection.creation.rate": true, "num.network.threads": true,
}

// perBrokerOnlyConfigs are Kafka's PerBrokerConfigs outside the listener
// prefix: the reconfigurable SSL keys and the listener definitions.
var perBrokerOnlyConfigs = map[string]bool{
	"ssl.keystore.type": true, "ssl.keystore.location": true, "ssl.keystore.password": true, "ssl.key.password": true,
	"ssl.keystore.key": true, "ssl.keystore.certificate.chain": true, "ssl.truststore.type": true,
	"ssl.truststore.location": true, "ssl.truststore.password": true, "ssl.truststore.certificates": true,
	"advertised.listeners": true, "listeners": true, "listener.security.protocol.map": true,
}

// perBrokerOnlyKeys lists, sorted, the keys of overrides that only one
// broker's resource may set, never the cluster-wide defaults.
func perBrokerOnlyKeys(overrides map[string]string) []string {
	var keys []string
	for key := range overrides {
		if perBrokerOnlyConfigs[key] {
			keys = append(keys, key)
			continue
		}
		if rest, ok := strings.CutPrefix(key, "listener.name."); ok {
			if _, base, ok := strings.Cut(rest, "."); ok && !clusterLevelListenerConfigs[base] {
				keys = append(keys, key)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// alterBrokerLogger applies an IncrementalAlterConfigs BROKER_LOGGER
// resource to this node's loggers, as Kafka's RuntimeLoggerManager: every
// operation is validated before any is applied.
func (b *Broker) alterBrokerLogger(rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) resourceResult {
	if code, msg := b.checkAlterNodeID(rr.ResourceName); code != 0 {
		return resourceResult{code, msg}
	}
	seen := map[string]bool{}
	var nulls []string
	for _, op := range rr.Configs {
		if seen[op.Name] {
			return resourceResult{kerr.InvalidRequest.Code, "Error due to duplicate config keys"}
		}
		seen[op.Name] = true
		if op.Op != kmsg.IncrementalAlterConfigOpDelete && op.Value == nil {
			nulls = append(nulls, op.Name)
		}
	}
	if len(nulls) > 0 {
		return resourceResult{kerr.InvalidRequest.Code, "Null value not supported for : " + strings.Join(nulls, ", ")}
	}
	if b.Loggers == nil {
		return resourceResult{kerr.InvalidRequest.Code, "this node has no runtime loggers"}
	}
	for _, op := range rr.Configs {
		if r := b.checkLoggerOp(op); r.code != 0 {
			return r
		}
	}
	if validateOnly {
		return resourceResult{}
	}
	for _, op := range rr.Configs {
		if op.Op == kmsg.IncrementalAlterConfigOpSet {
			b.Loggers.SetLoggerLevel(op.Name, *op.Value)
			b.Logger.Warn("updated the log level", "logger", op.Name, "level", *op.Value)
		} else {
			b.Loggers.UnsetLoggerLevel(op.Name)
			b.Logger.Warn("unset the log level", "logger", op.Name)
		}
	}
	return resourceResult{}
}

// checkLoggerOp validates one BROKER_LOGGER operation.
func (b *Broker) checkLoggerOp(op kmsg.IncrementalAlterConfigsRequestResourceConfig) resourceResult {
	const resource = "BROKER_LOGGER"
	switch op.Op {
	case kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete:
		if !b.Loggers.LoggerExists(op.Name) {
			return resourceResult{kerr.InvalidConfig.Code, "Logger " + op.Name + " does not exist!"}
		}
		if op.Op == kmsg.IncrementalAlterConfigOpDelete {
			if op.Name == rootLoggerName {
				return resourceResult{kerr.InvalidRequest.Code, "Removing the log level of the " + rootLoggerName + " logger is not allowed"}
			}
			return resourceResult{}
		}
		if !b.Loggers.ValidLevel(*op.Value) {
			return resourceResult{kerr.InvalidConfig.Code, "Cannot set the log level of " + op.Name + " to " + *op.Value +
				" as it is not a supported log level. Valid log levels are " + strings.Join(b.Loggers.ValidLevelNames(), ", ")}
		}
		return resourceResult{}
	case kmsg.IncrementalAlterConfigOpAppend:
		return resourceResult{kerr.InvalidRequest.Code, "APPEND operation is not allowed for the " + resource + " resource"}
	case kmsg.IncrementalAlterConfigOpSubtract:
		return resourceResult{kerr.InvalidRequest.Code, "SUBTRACT operation is not allowed for the " + resource + " resource"}
	}
	return resourceResult{kerr.InvalidRequest.Code, "Unknown operation type " + strconv.Itoa(int(op.Op)) + " is not allowed for the " + resource + " resource"}
}

// configResourceKey identifies a resource in a forwarded answer.
type configResourceKey struct {
	resourceType kmsg.ConfigResourceType
	name         string
}

// forwardedResults indexes a controller's answers by resource; a resource
// the controller did not answer gets UNKNOWN_SERVER_ERROR, as in Kafka.
type forwardedResults map[configResourceKey]resourceResult

func (f forwardedResults) get(resourceType kmsg.ConfigResourceType, name string) resourceResult {
	if r, ok := f[configResourceKey{resourceType, name}]; ok {
		return r
	}
	return resourceResult{kerr.UnknownServerError.Code, "The controller returned no result for this resource."}
}

// duplicateResources answers INVALID_REQUEST for every resource named more
// than once in a request, as Kafka's ConfigAdminManager does before
// anything else; keys[i] is the i-th resource.
func duplicateResources(keys []configResourceKey, results []*resourceResult) {
	count := make(map[configResourceKey]int, len(keys))
	for _, k := range keys {
		count[k]++
	}
	for i, k := range keys {
		if count[k] > 1 {
			results[i] = &resourceResult{kerr.InvalidRequest.Code, "Each resource must appear at most once."}
		}
	}
}

// undecided lists, in order, the indexes of the resources still to be
// decided by the controller.
func undecided(results []*resourceResult) []int {
	var out []int
	for i, r := range results {
		if r == nil {
			out = append(out, i)
		}
	}
	return out
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// brokerListOpRefusal is the receiving broker's answer to an APPEND or
// SUBTRACT of a broker key that is not a list, in Kafka's words
// (ConfigAdminManager.prepareIncrementalConfigs): INVALID_CONFIG "Config
// value append is not allowed for config key: <key>". Nil when every
// operation may go on.
func brokerListOpRefusal(ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) *resourceResult {
	for _, op := range ops {
		if op.Op != kmsg.IncrementalAlterConfigOpAppend && op.Op != kmsg.IncrementalAlterConfigOpSubtract {
			continue
		}
		key, known := config.LookupBroker(op.Name)
		if !known || key.Type == kmsg.ConfigTypeList {
			continue
		}
		verb := "append"
		if op.Op == kmsg.IncrementalAlterConfigOpSubtract {
			verb = "subtract"
		}
		return &resourceResult{kerr.InvalidConfig.Code, "Config value " + verb + " is not allowed for config key: " + op.Name}
	}
	return nil
}
