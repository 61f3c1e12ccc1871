package telemetry

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/samsa-streaming/samsa/internal/record"
)

// Errors of a pushed payload: ErrTooLarge answers TELEMETRY_TOO_LARGE
// (retriable: the client may push fewer metrics), ErrInvalidPayload
// INVALID_RECORD (the client stops pushing), as Kafka's exporter answers.
var (
	ErrTooLarge       = errors.New("telemetry: payload too large")
	ErrInvalidPayload = errors.New("telemetry: invalid payload")
)

// AcceptedCompressionTypes are the codecs a client may compress its
// payload with, the broker's preference first, as Kafka lists them: zstd,
// lz4, gzip, snappy.
var AcceptedCompressionTypes = []int8{record.CodecZstd, record.CodecLz4, record.CodecGzip, record.CodecSnappy}

// supportedCompression reports whether codec is one Kafka knows (none
// included, which a client may always use).
func supportedCompression(codec int8) bool {
	return codec == record.CodecNone || slices.Contains(AcceptedCompressionTypes, codec)
}

// Point is one exported value of a pushed metric.
type Point struct {
	// Name is the metric's name, with a suffix (_count, _sum) for the parts
	// of a histogram or summary.
	Name string
	// Attributes are the data point's attributes, "key=value" sorted by
	// key and joined with commas.
	Attributes string
	Value      float64
	// TimeUnixNano is when the client measured it.
	TimeUnixNano uint64
}

// DecodePayload decompresses a pushed payload with codec, at most maxBytes
// out, and decodes it as an OTLP MetricsData message; it returns at most
// maxPoints of its data points (a payload holding more reports truncated).
func DecodePayload(codec int8, payload []byte, maxBytes, maxPoints int) (points []Point, truncated bool, err error) {
	raw, err := record.DecompressBounded(codec, nil, payload, maxBytes)
	if errors.Is(err, record.ErrDecompressLimit) {
		return nil, false, fmt.Errorf("%w: more than %d bytes decompressed", ErrTooLarge, maxBytes)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	var data metricspb.MetricsData
	if err := proto.Unmarshal(raw, &data); err != nil {
		return nil, false, fmt.Errorf("%w: not an OTLP MetricsData message: %v", ErrInvalidPayload, err)
	}
	add := func(p Point) bool {
		if len(points) >= maxPoints {
			truncated = true
			return false
		}
		if math.IsNaN(p.Value) {
			p.Value = math.NaN() // one canonical NaN
		}
		points = append(points, p)
		return true
	}
	for _, rm := range data.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if !appendMetric(m, add) {
					return points, truncated, nil
				}
			}
		}
	}
	return points, truncated, nil
}

// appendMetric adds m's data points; false once add refuses one.
func appendMetric(m *metricspb.Metric, add func(Point) bool) bool {
	name := m.GetName()
	number := func(dps []*metricspb.NumberDataPoint) bool {
		for _, dp := range dps {
			v := dp.GetAsDouble()
			if _, ok := dp.GetValue().(*metricspb.NumberDataPoint_AsInt); ok {
				v = float64(dp.GetAsInt())
			}
			if !add(Point{Name: name, Attributes: attributes(dp.GetAttributes()), Value: v, TimeUnixNano: dp.GetTimeUnixNano()}) {
				return false
			}
		}
		return true
	}
	countSum := func(attrs string, count uint64, sum float64, t uint64) bool {
		return add(Point{Name: name + "_count", Attributes: attrs, Value: float64(count), TimeUnixNano: t}) &&
			add(Point{Name: name + "_sum", Attributes: attrs, Value: sum, TimeUnixNano: t})
	}
	switch d := m.GetData().(type) {
	case *metricspb.Metric_Gauge:
		return number(d.Gauge.GetDataPoints())
	case *metricspb.Metric_Sum:
		return number(d.Sum.GetDataPoints())
	case *metricspb.Metric_Histogram:
		for _, dp := range d.Histogram.GetDataPoints() {
			if !countSum(attributes(dp.GetAttributes()), dp.GetCount(), dp.GetSum(), dp.GetTimeUnixNano()) {
				return false
			}
		}
	case *metricspb.Metric_ExponentialHistogram:
		for _, dp := range d.ExponentialHistogram.GetDataPoints() {
			if !countSum(attributes(dp.GetAttributes()), dp.GetCount(), dp.GetSum(), dp.GetTimeUnixNano()) {
				return false
			}
		}
	case *metricspb.Metric_Summary:
		for _, dp := range d.Summary.GetDataPoints() {
			if !countSum(attributes(dp.GetAttributes()), dp.GetCount(), dp.GetSum(), dp.GetTimeUnixNano()) {
				return false
			}
		}
	}
	return true
}

// maxAttributeBytes bounds one data point's attribute string.
const maxAttributeBytes = 1024

// attributes renders a data point's attributes as sorted key=value pairs.
func attributes(kvs []*commonpb.KeyValue) string {
	if len(kvs) == 0 {
		return ""
	}
	pairs := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		pairs = append(pairs, kv.GetKey()+"="+anyValueString(kv.GetValue()))
	}
	slices.Sort(pairs)
	s := strings.Join(pairs, ",")
	if len(s) > maxAttributeBytes {
		// Cut at the bound, never inside a character: label values must
		// be valid UTF-8.
		s = strings.ToValidUTF8(s[:maxAttributeBytes], "")
	}
	return s
}

// anyValueString renders an attribute value: scalars as text, anything
// else (arrays, maps, bytes) by its kind only.
func anyValueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		return "[array]"
	case *commonpb.AnyValue_KvlistValue:
		return "[kvlist]"
	case *commonpb.AnyValue_BytesValue:
		return "[bytes]"
	}
	return ""
}
