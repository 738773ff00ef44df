"""strata-moe from Python (numpy): a GGUF layer, its router, a run in float16 and in q10.
Usage: python3 example.py MODEL.gguf"""
import sys

import numpy as np
import strata_moe

layer = strata_moe.Layer.from_gguf(sys.argv[1], 0)
x = np.random.default_rng(0).standard_normal((8, layer.d)).astype(np.float32)
ids, weights = layer.route(x)                          # the layer's router: top-k, renormalised
y = layer(x, ids, weights)                             # default profile: q10 where an arm has it; float32
y16 = layer(x.astype(np.float16), ids, weights)        # float16 in, float16 out
y10 = layer(x, ids, weights, numerics="q10", arm="fused")
print(f"strata_moe {strata_moe.version()}: y {y.shape} {y.dtype}, sum {y.sum():.6f}; "
      f"float16 sum {y16.astype(np.float32).sum():.6f}; q10 sum {y10.sum():.6f}")
try:
    layer(x, ids + 100, weights)
except strata_moe.InvalidArgumentError as e:
    print("refused:", e)
