package lock

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// samplesFile is the sample lock with two samples on the time server: one
// with a structured shape, one allowed side effects and not called yet.
func samplesFile(t testing.TB) *File {
	t.Helper()
	f := sampleFile(t)
	e := f.Servers["time"]
	e.Mcpform.Samples = map[string]Sample{
		"get_current_time": {Arguments: json.RawMessage(`{"timezone":"Europe/Paris"}`), Shape: &ResultShape{
			Content: []string{"text"},
			StructuredContent: &Shape{Types: []string{"object"}, Properties: map[string]*Shape{
				"datetime": {Types: []string{"string"}},
				"zones":    {Types: []string{"array"}, Items: &Shape{Types: []string{"null", "string"}}},
			}},
		}},
		"convert_time": {Arguments: json.RawMessage(`{}`), AllowSideEffects: true},
	}
	return f
}

// TestSamplesRoundTrip: samples are written under "mcpform" in the
// canonical form docs/LOCKFILE.md shows, read back as written, and an
// entry without samples has no samples key.
func TestSamplesRoundTrip(t *testing.T) {
	f := samplesFile(t)
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `        "samples": {
          "convert_time": {
            "arguments": {},
            "allowSideEffects": true
          },
          "get_current_time": {
            "arguments": {
              "timezone": "Europe/Paris"
            },
            "shape": {
              "content": [
                "text"
              ],
              "structuredContent": {
                "type": "object",
                "properties": {
                  "datetime": {
                    "type": "string"
                  },
                  "zones": {
                    "type": "array",
                    "items": {
                      "type": [
                        "null",
                        "string"
                      ]
                    }
                  }
                }
              }
            }
          }
        }`
	if !bytes.Contains(data, []byte(want)) {
		t.Fatalf("the lock has no samples object as\n%s\nin\n%s", want, data)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	if diff := cmp.Diff(f.Servers["time"].Mcpform.Samples, got.Servers["time"].Mcpform.Samples); diff != "" {
		t.Errorf("samples after Parse (-want +got):\n%s", diff)
	}
	again, err := Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Errorf("Marshal(Parse(data)) differs:\n%s", cmp.Diff(string(data), string(again)))
	}
	plain, err := Marshal(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain, []byte(`"samples"`)) {
		t.Errorf("an entry without samples has a samples key:\n%s", plain)
	}
}

// TestSamplesInConfigDigest: a sample is the user's, outside the surface
// digests and inside the configDigest: editing one by hand refuses the lock.
func TestSamplesInConfigDigest(t *testing.T) {
	good := goodLock(t, samplesFile(t))
	plain := goodLock(t, sampleFile(t))
	if a, b := surfaceDigestOf(t, good), surfaceDigestOf(t, plain); a != b {
		t.Errorf("samples moved the surface digest: %s vs %s", a, b)
	}
	bad := bytes.Replace(good, []byte(`"timezone": "Europe/Paris"`), []byte(`"timezone": "Europe/Rome"`), 1)
	if _, err := Parse(bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte("configDigest")) {
		t.Errorf("an edited sample: %v, want the configDigest's refusal", err)
	}
	bad = bytes.Replace(good, []byte(`"datetime": {
                    "type": "string"`), []byte(`"datetime": {
                    "type": "number"`), 1)
	if _, err := Parse(bad); err == nil {
		t.Errorf("an edited shape was accepted")
	}
}

func surfaceDigestOf(t *testing.T, data []byte) string {
	t.Helper()
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return f.Servers["time"].Digests.Surface
}

func TestParseRefusesSamples(t *testing.T) {
	good := unchecked(goodLock(t, samplesFile(t)))
	const args = `"arguments": {
              "timezone": "Europe/Paris"
            },`
	const ty = `"datetime": {
                    "type": "string"`
	const content = `"content": [
                "text"
              ],`
	checkEditsRefused(t, good, []edit{
		{"unknown key", args, args + ` "note": 1,`, `has an unknown key "note"`},
		{"no arguments", args, ``, `arguments is missing or not an object`},
		{"arguments not an object", args, `"arguments": [1],`, `arguments is missing or not an object`},
		{"allowSideEffects false", `"allowSideEffects": true`, `"allowSideEffects": false`, `allowSideEffects must be true when present`},
		{"empty tool name", `"convert_time": {
            "arguments": {},`, `"": {
            "arguments": {},`, `mcpform.samples has an empty tool name`},
		{"unknown content type", content, `"content": ["video"],`, `"video" is not a content type`},
		{"content run not collapsed", content, `"content": ["text", "text"],`, `repeats "text"`},
		{"no content", content, ``, `content is missing`},
		{"isError false", content, content + ` "isError": false,`, `isError must be true when present`},
		{"unknown JSON type", ty, `"datetime": {"type": "integer"`, `"integer" is not a JSON type`},
		{"unsorted union", `"type": [
                        "null",
                        "string"
                      ]`, `"type": ["string", "null"]`, `is not sorted without repeats`},
		{"union of one", `"type": [
                        "null",
                        "string"
                      ]`, `"type": ["string"]`, `a list names two types or more`},
		{"properties on a string", ty, ty + `, "properties": {"a": {"type": "null"}}`, `properties is set for a type that is not an object`},
		{"items on an object", `"structuredContent": {
                "type": "object",`, `"structuredContent": {"type": "object", "items": {"type":"null"},`, `items is set for a type that is not an array`},
		{"no type", ty, `"datetime": {"kind": "string"`, `has an unknown key "kind"`},
		{"shape wrong case", `"shape": {`, `"Shape": {`, `has an unknown key "Shape"`},
	})
	// Too deep: a shape nested past MaxShapeDepth.
	deep := `{"type": "string"}`
	for range MaxShapeDepth + 1 {
		deep = `{"type": "array", "items": ` + deep + `}`
	}
	checkEditsRefused(t, good, []edit{{"too deep", `"datetime": {
                    "type": "string"
                  }`, `"datetime": ` + deep, `nests at most 32 deep`}})
}

// TestSamplesFuzzSeed keeps the FuzzParse seed with samples the lock as
// Marshal writes it today (testdata/fuzz/FuzzParse/samples).
func TestSamplesFuzzSeed(t *testing.T) {
	data, err := Marshal(samplesFile(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
	path := filepath.Join("testdata", "fuzz", "FuzzParse", "samples")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not the samples lock Marshal writes; rewrite it with UPDATE_GOLDEN=1 go test ./lock -run TestSamplesFuzzSeed", path)
	}
}
