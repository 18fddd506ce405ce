#pragma once
/// Tail probabilities of the normal, chi-square (1 df) and Student t distributions, and the regularized incomplete beta they rest on.

namespace kvsweep::stats {

/// I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1 and a, b > 0 (NaN otherwise).
/// Evaluated by its continued fraction (DLMF 8.17.22) with the modified Lentz method (Lentz 1976;
/// Thompson & Barnett 1986), using I_x(a, b) = 1 - I_{1-x}(b, a) when x > (a + 1) / (a + b + 2),
/// where the fraction converges fast. Accurate to about 1e-14.
double regularized_incomplete_beta(double x, double a, double b);

/// P(|T| >= |t|) for Student's t with df > 0 degrees of freedom: I_{df/(df+t^2)}(df/2, 1/2)
/// (Abramowitz & Stegun 26.7.1 with 26.5.27). |t| = inf → 0; NaN t or df <= 0 → NaN.
double student_t_two_sided_p(double t, double df);

/// P(|Z| >= |z|) for a standard normal Z: erfc(|z| / sqrt 2).
double normal_two_sided_p(double z);

/// P(X >= x) for chi-square with 1 degree of freedom (X = Z^2): erfc(sqrt(x / 2)); 1 for x <= 0.
double chi_square_1df_sf(double x);

}  // namespace kvsweep::stats
