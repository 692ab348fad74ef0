"""The op table's bfloat16 column (tests/test_ops_bfloat16.py).

Every row that runs float32 and has a NumPy reference also runs on bfloat16 samples: the result
is compared with the reference computed in float32 on the same (bfloat16-rounded) inputs, to
bfloat16's tolerance, and a floating result must be bfloat16 (torch's rule) unless listed in
RESULT_DTYPE. Rows with sparse layouts also compare each sparse variant with the dense result.
The rows left out, and why:
"""

import sparsetorch as st

# rows checked sample by sample against torch itself (an error where torch raises one, its
# values where it answers): where torch raises for bfloat16 (LAPACK-backed linalg, quantile,
# view_as_complex), and where torch's own bfloat16 rounding of intermediates (round's scaling,
# cross's products, multi_dot's chain) is the reference rather than a float32 computation
AS_TORCH = {
    "round", "cross", "linalg.cross", "linalg.multi_dot",
    "view_as_complex", "quantile", "nanquantile", "linalg.inv", "inverse", "linalg.det",
    "linalg.slogdet", "logdet", "linalg.solve", "linalg.solve_triangular", "linalg.cholesky(pd)",
    "linalg.pinv", "pinverse", "linalg.eigvalsh(sym)", "linalg.svdvals", "linalg.qr",
    "linalg.matrix_power", "linalg.matrix_norm", "linalg.matrix_rank",
    "complex", "polar",  # torch refuses bfloat16 halves (no complex bfloat16)
}

SKIP = {
    # an additive float mask rounded to bfloat16 before the softmax lands beyond the sweep's
    # tolerance of the float64 reference for some samples, as torch's does; compared with torch
    # in bfloat16 instead (tests/nn/test_attention.py::test_sdpa_bfloat16_as_torch)
    "nn.functional.scaled_dot_product_attention": "bfloat16 checked against torch in test_attention",
    # torch steps a bfloat16 linspace in bfloat16 arithmetic chunk by chunk of its SIMD width;
    # values can differ from NumPy's float64 reference (and torch's) by one bfloat16 step
    "linspace": "bfloat16 stepping is not NumPy's; see tests/test_bfloat16.py",
    # torch has no bfloat16 kernel for these; ours runs the recurrence in bfloat16, where
    # the cancellation at high degree exceeds the tolerance (float32 and float64 are swept)
    # torch answers garbage (exp(I) = -1.3e30 in bfloat16); sparsetorch refuses low precision
    # here as in the other linalg ops
    "linalg.matrix_exp": "refused (torch's bfloat16 result is wrong)",
    "shifted_chebyshev_polynomial_t": "no bfloat16 kernel in torch; cancellation in bfloat16",
    "shifted_chebyshev_polynomial_u": "no bfloat16 kernel in torch; cancellation in bfloat16",
}

# whole families: torch.fft refuses bfloat16 ("Unsupported dtype BFloat16"); its rows say so
SKIP_PREFIXES = ("fft.",)

# result dtypes that are not bfloat16 for bfloat16 input (None: the sample chooses it)
RESULT_DTYPE = {"float_power": st.float64, "to": None}

RTOL, ATOL = 1.6e-2, 1e-2  # bfloat16 keeps 8 significant bits: 2**-7 relative spacing
