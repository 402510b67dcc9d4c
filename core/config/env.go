package config

import (
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// evalContext is the context every expression of the file is evaluated in:
// no variables, and the functions listed in Functions.
func evalContext(lookupEnv lookupEnvFunc) *hcl.EvalContext {
	return &hcl.EvalContext{Functions: Functions(lookupEnv)}
}

// Functions returns the functions available in configuration expressions,
// reading the environment with lookupEnv (os.LookupEnv when nil):
//
//	env("NAME")            the value of environment variable NAME; an error
//	                       naming NAME when it is not set
//	env("NAME", "default") the value of NAME, or "default" when it is not set
//	                       (a variable set to "" is set: it gives "")
func Functions(lookupEnv func(string) (string, bool)) map[string]function.Function {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	return map[string]function.Function{"env": envFunc(lookupEnv)}
}

func envFunc(lookupEnv func(string) (string, bool)) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the value of an environment variable, or the default given as second argument when it is not set.",
		Params: []function.Parameter{{
			Name: "name",
			Type: cty.String,
		}},
		VarParam: &function.Parameter{
			Name: "default",
			Type: cty.String,
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			if name == "" {
				return cty.NilVal, function.NewArgErrorf(0, "the variable name must not be empty")
			}
			if len(args) > 2 {
				return cty.NilVal, function.NewArgErrorf(2, "env takes a name and at most one default")
			}
			if v, ok := lookupEnv(name); ok {
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return cty.NilVal, fmt.Errorf("environment variable %q is not set; set it, or give a default: env(%q, \"\")", name, name)
		},
	})
}
