// SPDX-License-Identifier: MIT
#pragma once
/// Every composite op, and indexing: the one header of diff/ that user code (or
/// strata.hpp) includes. The composites are written once as templates over Diffable,
/// from the primitives of Prims<T> only, so they run — and are differentiable — at
/// every level of the AD stack (Tensor, Forward<T>, Reverse<T>, nested). Each concern
/// is its own header, which also defines the Ops<D> methods of its ops:
///
///   diff/operands.hpp     how composites lift, promote and broadcast mixed operands;
///                         plain, stop_gradient, constant_like, zeros_like
///   diff/arithmetic.hpp   add sub mul div pow maximum minimum, + - * / and unary -
///   diff/comparison.hpp   eq ne lt le gt ge (== != < <= > >=), logical_*, where
///   diff/math.hpp         exp log sin cos sqrt tanh log1p expm1 erf abs sign clamp
///   diff/reductions.hpp   sum max min argmax argmin sum_to
///   diff/statistics.hpp   mean var std norm logsumexp
///   diff/activations.hpp  sigmoid relu gelu silu softplus softmax log_softmax
///   diff/normalization.hpp layer_norm rms_norm group_norm batch_norm
///   diff/dropout.hpp      bernoulli dropout, from a st::Key (core/key.hpp: split, fold_in)
///   diff/attention.hpp    scaled_dot_product_attention attention_weights
///   diff/movement.hpp     reshape permute expand transpose squeeze unsqueeze flatten
///                         flip slice pad cast concat stack split windows fold
///   diff/conv.hpp         conv conv_transpose (windows, the im2col copy, matmul; fold)
///   diff/pool.hpp         max_pool avg_pool adaptive_avg_pool
///   diff/matrix.hpp       matmul dot tril triu diagonal diag_embed one_hot
///   diff/linalg/*.hpp     st::linalg: cholesky lu eigh eigvalsh svd svdvals qr,
///                         solve_triangular solve cho_solve inv pinv lstsq,
///                         slogdet det logdet matrix_norm
///   diff/scan.hpp         cumsum cumprod
///   diff/roll.hpp         roll
///   diff/cross.hpp        cross
///   diff/triangle.hpp     tril_indices triu_indices, tril_pack triu_pack,
///                         tril_unpack triu_unpack (packed triangles)
///   diff/value.hpp        value_of item (a traced value's primal, for control flow)
///   diff/index.hpp        ix oix vix take, st::Index and its entries
#include "diff/activations.hpp"
#include "diff/arithmetic.hpp"
#include "diff/attention.hpp"
#include "diff/comparison.hpp"
#include "diff/conv.hpp"
#include "diff/cross.hpp"
#include "diff/dropout.hpp"
#include "diff/index.hpp"
#include "diff/linalg/det.hpp"
#include "diff/linalg/solve.hpp"
#include "diff/math.hpp"
#include "diff/matrix.hpp"
#include "diff/movement.hpp"
#include "diff/normalization.hpp"
#include "diff/operands.hpp"
#include "diff/pool.hpp"
#include "diff/reductions.hpp"
#include "diff/roll.hpp"
#include "diff/scan.hpp"
#include "diff/statistics.hpp"
#include "diff/triangle.hpp"
#include "diff/value.hpp"
