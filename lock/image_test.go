package lock

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const imageDigestSample = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// imageFile is the sample lock with an image record (and docker's pin) on
// its command server "notes", started with docker run.
func imageFile(t testing.TB) *File {
	f := sampleFile(t)
	e := f.Servers["notes"]
	e.Command = []string{"docker", "run", "-i", "--rm", "ghcr.io/acme/notes:1.2", "stdio"}
	e.Mcpform = &Settings{
		Pins:  &Pins{Executable: &FilePin{Path: "/usr/bin/docker", SHA256: nodeSum}},
		Image: &Image{Reference: "ghcr.io/acme/notes:1.2", Digest: imageDigestSample, MediaType: "application/vnd.oci.image.index.v1+json"},
	}
	return f
}

// TestImageRoundTrip: the image record is written under the entry's
// "mcpform" key beside pins, read back as written, outside the digests;
// an empty mediaType is left out, and a lock without the record has no
// image key.
func TestImageRoundTrip(t *testing.T) {
	f := imageFile(t)
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `        "image": {
          "reference": "ghcr.io/acme/notes:1.2",
          "digest": "` + imageDigestSample + `",
          "mediaType": "application/vnd.oci.image.index.v1+json"
        }
`
	if !bytes.Contains(data, []byte(want)) {
		t.Fatalf("the lock has no image object as\n%s\nin\n%s", want, data)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	if diff := cmp.Diff(f.Servers["notes"].Mcpform.Image, got.Servers["notes"].Mcpform.Image); diff != "" {
		t.Errorf("image after Parse (-want +got):\n%s", diff)
	}
	again, err := Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("Marshal(Parse(data)) differs (-first +second):\n%s", diff)
	}
	plain := sampleFile(t).Servers["notes"]
	plain.Command = f.Servers["notes"].Command
	if err := plain.Seal(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain.Digests, got.Servers["notes"].Digests); diff != "" {
		t.Errorf("digests changed with the image record (-without +with):\n%s", diff)
	}
	f.Servers["notes"].Mcpform.Image.MediaType = ""
	if data, err = Marshal(f); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"mediaType"`)) {
		t.Errorf("a record without a media type has the key:\n%s", data)
	}
	if got, err := Parse(data); err != nil || got.Servers["notes"].Mcpform.Image.MediaType != "" {
		t.Errorf("Parse without mediaType: %v", err)
	}
	// The record alone is enough to write the mcpform key.
	f.Servers["notes"].Mcpform = &Settings{Image: &Image{Reference: "alpine", Digest: imageDigestSample}}
	if data, err = Marshal(f); err != nil {
		t.Fatal(err)
	}
	if got, err := Parse(data); err != nil || got.Servers["notes"].Mcpform == nil || got.Servers["notes"].Mcpform.Image == nil {
		t.Errorf("a lock with only an image record: %v\n%s", err, data)
	}
	without, err := Marshal(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(without, []byte(`"image"`)) {
		t.Errorf("a lock without an image record has an image key:\n%s", without)
	}
}

func TestParseRefusesImage(t *testing.T) {
	good := goodLock(t, imageFile(t))
	const ref = `"reference": "ghcr.io/acme/notes:1.2"`
	const dg = `"digest": "` + imageDigestSample + `"`
	const mt = `"mediaType": "application/vnd.oci.image.index.v1+json"`
	checkEditsRefused(t, good, []edit{
		{"unknown key", ref, ref + `, "tag": "1.2"`, `mcpform.image has an unknown key "tag"`},
		{"wrong case", ref, `"Reference": "ghcr.io/acme/notes:1.2"`, `mcpform.image has an unknown key "Reference"`},
		{"no reference", ref + `,`, ``, `mcpform.image.reference is missing`},
		{"no digest", dg + `,`, ``, `mcpform.image.digest is missing`},
		{"reference not a string", ref, `"reference": ["x"]`, `mcpform.image.reference is not a string`},
		{"empty reference", ref, `"reference": ""`, `is not an image reference`},
		{"control in reference", ref, `"reference": "ghcr.io/acme/notes\u001b[2J"`, `is not an image reference`},
		{"space in reference", ref, `"reference": "alpine --privileged"`, `is not an image reference`},
		{"long reference", ref, `"reference": "` + strings.Repeat("a", MaxImageReference+1) + `"`, `is not an image reference`},
		{"sha512 digest", dg, `"digest": "sha512:` + strings.Repeat("ab", 64) + `"`, `is not sha256:<64 lowercase hex>`},
		{"bare hex digest", dg, `"digest": "` + strings.TrimPrefix(imageDigestSample, "sha256:") + `"`, `is not sha256:<64 lowercase hex>`},
		{"upper-case digest", dg, `"digest": "` + strings.ToUpper(imageDigestSample) + `"`, `is not sha256:<64 lowercase hex>`},
		{"digest not a string", dg, `"digest": 1`, `mcpform.image.digest is not a string`},
		{"empty media type", mt, `"mediaType": ""`, `is not a media type`},
		{"media type junk", mt, `"mediaType": "text/plain; x=\"y\""`, `is not a media type`},
	})
}

func TestImageRefusedOnRemote(t *testing.T) {
	e := remoteEntry(t)
	e.Mcpform = &Settings{Image: imageFile(t).Servers["notes"].Mcpform.Image}
	data, err := Marshal(&File{Servers: map[string]*Entry{"r": e}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data); err == nil || !strings.Contains(err.Error(), "mcpform.image is set on a remote server") {
		t.Errorf("Parse of a remote entry with an image record = %v", err)
	}
}
