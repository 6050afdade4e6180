# MILP search for a counterexample of an ACAS Xu conjunction property on a box (session 8, issue 7):
# maximise t s.t. t <= Y_0 - Y_j (j = 1..4, prop_2's unsafe set: Y_0 is the largest), big-M ReLU
# encoding with CROWN pre-activation bounds (crown.py), SciPy HiGHS. t >= 0 at the optimum: a
# counterexample (checked by a float64 forward pass). /usr/bin/python3 milp_conj.py NET [x0l x0u ... x4l x4u] [--tl S]
import sys, time, numpy as np, torch
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix
from acas import *; from crown import *
torch.set_num_threads(1)
args=[a for a in sys.argv[1:]]
tl=300.0
if '--tl' in args: i=args.index('--tl'); tl=float(args[i+1]); del args[i:i+2]
net=args[0]; fwd,sub,layers=load(net)
if len(args)>1: v=list(map(float,args[1:11])); lo=torch.tensor(v[0::2],dtype=torch.float64); hi=torch.tensor(v[1::2],dtype=torch.float64)
else: lo,hi=read_box('prop_2')
# the network's first op subtracts `sub`; fold it into the first bias
W0,b0=layers[0]; L=[(W0,b0-W0@sub)]+layers[1:]
bounds,rel=layer_bounds(L,lo[None],hi[None])
sizes=[w.shape[0] for w,_ in L[:-1]]; n_in=5
nv=n_in+3*sum(sizes)+1
lb=np.full(nv,-np.inf); ub=np.full(nv,np.inf); integ=np.zeros(nv)
lb[:5]=lo.numpy(); ub[:5]=hi.numpy()
rows=[];rl=[];ru=[]
prev,prev_n,at=0,5,5; unst=[]
for k,((w,b),m) in enumerate(zip(L[:-1],sizes)):
    w=w.numpy(); b=b.numpy(); l=bounds[k][0][0].numpy(); u=bounds[k][1][0].numpy()
    iz,ih,idd=at,at+m,at+2*m
    lb[iz:iz+m]=l; ub[iz:iz+m]=u; lb[ih:ih+m]=0; ub[ih:ih+m]=np.maximum(u,0); lb[idd:idd+m]=0; ub[idd:idd+m]=1; integ[idd:idd+m]=1
    for i in range(m):
        c={iz+i:1.0}; c.update({prev+j:-w[i,j] for j in range(prev_n)})
        rows.append(c); rl.append(b[i]); ru.append(b[i])
        if l[i]>=0: rows.append({ih+i:1,iz+i:-1}); rl.append(0); ru.append(0); ub[idd+i]=0
        elif u[i]<=0: ub[ih+i]=0; ub[idd+i]=0
        else:
            rows.append({ih+i:1,iz+i:-1}); rl.append(0); ru.append(np.inf)
            rows.append({ih+i:1,idd+i:-u[i]}); rl.append(-np.inf); ru.append(0)
            rows.append({ih+i:1,iz+i:-1,idd+i:-l[i]}); rl.append(-np.inf); ru.append(-l[i])
    unst.append(int(((l<0)&(u>0)).sum()))
    prev,prev_n,at=ih,m,at+3*m
wo,bo=L[-1]; wo=wo.numpy(); bo=bo.numpy(); t=nv-1
for j in range(1,5):   # t - (Y_0 - Y_j) <= 0
    c={t:1.0}
    for q in range(prev_n): c[prev+q]=c.get(prev+q,0)-(wo[0,q]-wo[j,q])
    rows.append(c); rl.append(-np.inf); ru.append(bo[0]-bo[j])
A=lil_matrix((len(rows),nv))
for r,c in enumerate(rows):
    for j,v in c.items(): A[r,j]=v
obj=np.zeros(nv); obj[t]=-1
t0=time.time()
res=milp(obj,constraints=LinearConstraint(A.tocsr(),rl,ru),integrality=integ,bounds=Bounds(lb,ub),options={'time_limit':tl,'mip_rel_gap':1e-6})
best=-res.fun if res.x is not None else None
dual=-getattr(res,'mip_dual_bound',np.nan) if getattr(res,'mip_dual_bound',None) is not None else None
print('unstable',unst,'status',res.status,'max t',best,'dual bound',dual,'%.1f s'%(time.time()-t0))
if res.x is not None:
    x=torch.tensor(res.x[:5]); y=fwd(x[None])[0]
    print('x',repr(x.numpy()),'y',y.numpy(),'Y0-max others %.3e'%float(y[0]-y[1:].max()))
