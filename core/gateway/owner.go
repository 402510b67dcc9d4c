package gateway

import "github.com/clawhost/clawhost/core/admission"

// OwnerClaims checks "/owner CODE" against the one-time owner code `clawhost
// init` made (admission.OwnerClaims); *ownerclaim.Claims implements it.
type OwnerClaims = admission.OwnerClaims
