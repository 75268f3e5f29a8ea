"""Dynamic models as programs of intermediate variables.

Each algorithm is one module and one public function returning a
:class:`~kanerobot.symbolic.Program` whose inputs are the robot's joint
variables ``q``, velocities ``QP``, accelerations ``QDP`` (torques ``GAM`` for
the direct model) and its parameters:

- :mod:`~kanerobot.dynamics.newton_euler`: inverse dynamic model by Khalil's
  customized recursive Newton-Euler (outputs ``GAM<label>``), and its
  specialisations H (centrifugal, Coriolis, gravity, friction) and Q (gravity);
- :mod:`~kanerobot.dynamics.composite`: inertia matrix by composite links
  (outputs ``A<i><j>``);
- :mod:`~kanerobot.dynamics.coriolis`: Coriolis matrix in Christoffel form;
- :mod:`~kanerobot.dynamics.direct`: recursive direct dynamic model (outputs
  ``QDP<label>``);
- :mod:`~kanerobot.dynamics.model`: :func:`derive`, which gathers them and
  chooses the model of the robot's structure (its ``STRUCTURES`` table);
- :mod:`~kanerobot.dynamics.dynamic_model`: the model class every structure
  shares and the numeric functions built from generated code;
- :mod:`~kanerobot.dynamics.free_flyer`: the floating base's symbols and
  checks, shared by the floating-base engines.

Each recursion is written once and serves every root (fixed, moving with a
known motion, or a free flyer: :mod:`~kanerobot.dynamics.root`):

- forward link kinematics (SYMORO+ eqs 6-10):
  :func:`kanerobot.kinematics.forward_step`, run by Newton-Euler, Kane's
  nested sums, the regressor and :func:`~kanerobot.kinematics.link_kinematics`;
- the wrench of a subtree from its successors' (eqs 17-19):
  :func:`~kanerobot.dynamics.common.subtree_wrench`, run by Newton-Euler's
  backward recursion and Kane's sums S1-S2;
- composite links and the columns of A (eqs 27-38):
  :func:`~kanerobot.dynamics.composite.composite_links` and
  :func:`~kanerobot.dynamics.composite.column_wrenches`, run by the
  inertia matrix of Newton-Euler and of Kane;
- the articulated-body passes with known-torque and known-acceleration
  joints: :func:`~kanerobot.dynamics.direct.articulated_bodies`, run by the
  direct dynamic model, the free-floating base acceleration and the
  flexible-joint three-step model;
- the Christoffel form of C, with the free flyer's Hamel terms:
  :func:`~kanerobot.dynamics.coriolis.coriolis_matrix`.

:data:`~kanerobot.dynamics.dynamic_model.ENGINES` is the table ``derive``
reads: each engine's builder of each model.
"""
