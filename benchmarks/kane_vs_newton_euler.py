"""Kane's derivation (nested programs) against Newton-Euler's, and sympy's own KanesMethod.

What "derivation" means here, the same for both engines: a fresh
``kanerobot.derive(robot, method)`` and its inertia matrix A, Coriolis
matrix C, gravity torques Q and inverse dynamic model programs
(``mass_matrix``, ``coriolis_matrix``, ``gravity``, ``inverse_dynamics``),
pruned, as the code exports use them.  Kane's programs are its order-n
nested sums (:class:`kanerobot.dynamics.kane.NestedKane`); sympy's
``KanesMethod`` is not built for them (``model.kanes_method`` builds it
when asked).  Newton-Euler's are :mod:`kanerobot.dynamics.newton_euler`,
:mod:`~kanerobot.dynamics.composite` and :mod:`~kanerobot.dynamics.coriolis`.

Robots: the RX-90 (6 joints), Krang (a 17-joint tree) and a cart carrying
a pendulum of 20 links (:func:`cart_pendulum`, 21 joints), like sympy's
``sympy.physics.mechanics.models.n_link_pendulum_on_cart(20)``, whose
KanesMethod (``kanes_equations``, ``mass_matrix_full``, ``forcing_full``:
what that function returns, then read) is timed for reference.

Target: Kane's time / Newton-Euler's at most 1.5 on each robot.

Times are CPU times of this process (``time.process_time``), so that other
work on the machine weighs less; each is the best of ``--repeat`` rounds.
The runs are interleaved (one of each measurement per round), and before
every run sympy's cache is cleared, the previous result dropped and the
garbage collector run, so that no measurement inherits another's objects.

Run:  python benchmarks/kane_vs_newton_euler.py [--repeat N] [--links N]
"""

import argparse
import sys

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import sympy
from kane_vs_naive import run_once  # CPU time from a cleared sympy cache, as there
from sympy.physics.mechanics import models

import kanerobot as kr
from kanerobot.robot.description import Base, Frame, KKPlacement, Robot

TARGET = 1.5
#: The models both engines derive.
MODELS = ("mass_matrix", "coriolis_matrix", "gravity", "inverse_dynamics")


def cart_pendulum(n):
    """A cart on a rail carrying an ``n``-link planar pendulum, as a robot.

    Frame 0 has its z axis along the rail, horizontal, and gravity ``G1``
    along x0 (``G = [G1, 0, 0]``).  Joint 1 is the cart, prismatic along
    z0 (``r = q1``); joint 2, on the cart, turns about the horizontal axis
    across the rail (``alpha = pi/2``: ``z2 = -y0``); joints 3 .. n+1 turn
    about parallel axes, each at the end of the previous link (``d =
    L<j-1>``).  The pendulum swings in the vertical plane of the rail, as in
    sympy's ``models.n_link_pendulum_on_cart(n)`` (which has point masses
    and absolute angles; every link here has the general inertial
    parameters, friction and a rotor inertia, and the angles are relative).

    Parameters
    ----------
    n : int
        Number of pendulum links (at least 1).

    Returns
    -------
    Robot
        ``cart_pendulum<n>``, serial, ``n + 1`` joints ``q1 .. q<n+1>``.

    Examples
    --------
    >>> robot = cart_pendulum(2)
    >>> robot.dof, [f.sigma for f in robot.frames]
    (3, [1, 0, 0])
    """
    if int(n) != n or n < 1:
        raise ValueError(f"a cart pendulum needs at least one link, got n = {n!r}")
    q = sympy.symbols(f"q1:{n + 2}")
    frames = [Frame("1", "0", 1, 1, KKPlacement(r=q[0])),
              Frame("2", "1", 0, 1, KKPlacement(alpha=sympy.pi / 2, theta=q[1]))]
    for j in range(3, n + 2):
        frames.append(Frame(str(j), str(j - 1), 0, 1, KKPlacement(d=sympy.Symbol(f"L{j - 1}"), theta=q[j - 1])))
    base = Base(G=sympy.ImmutableMatrix([sympy.Symbol("G1"), 0, 0]))
    return Robot.create(f"cart_pendulum{n}", frames, base=base)


def derivation(robot, method):
    """A fresh model of ``robot`` by ``method`` and its :data:`MODELS` programs."""
    model = kr.derive(robot, method)
    return {name: model.program(name) for name in MODELS}


def sympy_cart(n):
    """sympy's own n-link pendulum on a cart: KanesMethod's equations, mass matrix and forcing."""
    kane = models.n_link_pendulum_on_cart(n, cart_force=True, joint_torques=True)
    return kane.mass_matrix, kane.forcing


def verdict(ratio):
    return f"{ratio:5.2f} (target <= {TARGET}): {'met' if ratio <= TARGET else 'NOT met'}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of measurements, best kept (default 3)")
    parser.add_argument("--links", type=int, default=20, help="pendulum links on the cart (default 20)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.links < 1:
        parser.error(f"--repeat and --links must be at least 1, got {args.repeat} and {args.links}")
    robots = {
        "RX-90": kr.load(kr.frames_path("rx90")),
        "Krang": kr.load(kr.frames_path("krang")),
        f"cart + {args.links}-link pendulum": cart_pendulum(args.links),
    }
    measurements = {}
    for title, robot in robots.items():
        for method in ("newton-euler", "kane"):
            measurements[title, method] = lambda robot=robot, method=method: derivation(robot, method)
    measurements["sympy", "KanesMethod"] = lambda: sympy_cart(args.links)
    best, counts = {}, {}
    for round_ in range(args.repeat):
        times = {}
        for key, function in measurements.items():
            times[key], result = run_once(function)
            best[key] = min(best.get(key, times[key]), times[key])
            if isinstance(result, dict):
                counts[key] = {name: program.op_count() for name, program in result.items()}
            del result  # not kept alive during the next run
        print(f"round {round_ + 1} (CPU s): " + ", ".join(f"{a} {b} {t:.2f}" for (a, b), t in times.items()), flush=True)

    print()
    print(f"derivation = kr.derive(robot, method) and its {', '.join(MODELS)} programs (best CPU s)")
    print(f"{'robot':28s} {'newton-euler':>12s} {'kane':>8s}   kane / newton-euler")
    ratios = []
    for title in robots:
        ne, kane = best[title, "newton-euler"], best[title, "kane"]
        ratios.append(kane / ne)
        print(f"{title:28s} {ne:12.2f} {kane:8.2f}   {verdict(kane / ne)}")
    print(f"for reference, sympy's models.n_link_pendulum_on_cart({args.links}) with KanesMethod's mass matrix "
          f"and forcing: {best['sympy', 'KanesMethod']:.2f} s")
    print()
    print("operations of the programs (mul/add), kane | newton-euler:")
    for title in robots:
        row = []
        for name in MODELS:
            k, n = counts[title, "kane"][name], counts[title, "newton-euler"][name]
            row.append(f"{name} {k['mul']}/{k['add']} | {n['mul']}/{n['add']}")
        print(f"  {title}: " + "; ".join(row))
    return 0 if all(ratio <= TARGET for ratio in ratios) else 1


if __name__ == "__main__":
    sys.exit(main())
