package persona

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaJSON is the output schema of a verdict record, copied verbatim from
// seed 000 (spec persona.md "Output").
//
//go:embed schema.json
var SchemaJSON []byte

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

func compiledSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
		if err != nil {
			schemaErr = fmt.Errorf("output schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("evident://persona/schema.json", doc); err != nil {
			schemaErr = fmt.Errorf("output schema: %w", err)
			return
		}
		schema, schemaErr = c.Compile("evident://persona/schema.json")
	})
	return schema, schemaErr
}

// ValidateJSON validates one encoded verdict record against the seed's output
// schema. The error lists every violation with its JSON pointer.
func ValidateJSON(record []byte) error {
	sch, err := compiledSchema()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(record))
	if err != nil {
		return fmt.Errorf("record is not JSON: %w", err)
	}
	return sch.Validate(v)
}
